"""Write a tiny llama-architecture GGUF model with random weights, for smoke tests.

    python scripts/tiny_gguf.py OUT.gguf [--vocab ggml-vocab-llama-spm.gguf] [--seed 0]

Used by ``scripts/calibrate_local.sh --tiny``: it lets llama.cpp's OpenAI-compatible server
run end to end where no real model weights can be downloaded. The weights are random, so
whatever the model says is noise; what a run with it proves is the plumbing (the HTTP path,
structured output constrained by the server, the calibration report), not judgement.

Requirements (installed into the calibration server's environment, not the project's):
``gguf>=0.19,<1`` and numpy (a dependency of gguf).

The tokenizer is copied from a vocab-only GGUF file (``--vocab``; llama.cpp ships
``models/ggml-vocab-llama-spm.gguf``, which is in llama-cpp-python's source distribution):
its ``tokenizer.*`` key/values are read with ``gguf.GGUFReader`` and written into the new
file, and the vocabulary size sets the embedding and output tensors. Without ``--vocab`` a
small SentencePiece-style vocabulary is made up instead: the special tokens, the 256 byte
tokens (so any UTF-8 text can be tokenised) and the printable ASCII characters.

The model: 2 layers, embedding 64, 4 heads (head size 16), feed-forward 128, context 4096
(a calibration prompt with its case does not fit in 512 tokens). Norms and layer weights are
f32; the two vocabulary-sized matrices are f16, which keeps the file at a few MB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import gguf
import numpy as np

N_LAYER = 2
N_EMBD = 64
N_HEAD = 4
N_HEAD_KV = 4
N_FF = 128
N_CTX = 4096
RMS_EPS = 1e-5


def _field_value(field: Any) -> tuple[Any, gguf.GGUFValueType, gguf.GGUFValueType | None]:
    """A reader field's value, its type and (for arrays) its element type."""
    kind = field.types[0]
    if kind == gguf.GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == gguf.GGUFValueType.STRING:
            values = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        else:
            values = [field.parts[i].tolist()[0] for i in field.data]
        return values, kind, sub
    if kind == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8"), kind, None
    return field.parts[field.data[0]].tolist()[0], kind, None


def copy_vocab(writer: gguf.GGUFWriter, vocab_file: Path) -> int:
    """Copy the ``tokenizer.*`` key/values of a vocab-only GGUF file; return the vocab size."""
    reader = gguf.GGUFReader(vocab_file)
    n_vocab = 0
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        value, kind, sub = _field_value(field)
        writer.add_key_value(name, value, kind, sub_type=sub)
        if name == "tokenizer.ggml.tokens":
            n_vocab = len(value)
    if not n_vocab:
        raise SystemExit(f"tiny_gguf: no tokenizer.ggml.tokens in {vocab_file}")
    return n_vocab


def made_up_vocab(writer: gguf.GGUFWriter) -> int:
    """A SentencePiece-style vocabulary: specials, 256 byte tokens, printable ASCII."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    # SentencePiece writes a space as U+2581; the other printable characters are themselves.
    chars = ["\u2581"] + [chr(c) for c in range(0x21, 0x7F)]
    tokens += chars
    types += [gguf.TokenType.NORMAL] * len(chars)
    scores = [0.0] * (3 + 256) + [-float(i) for i in range(len(chars))]
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    return len(tokens)


def write_model(out: Path, vocab_file: Path | None, seed: int) -> None:
    writer = gguf.GGUFWriter(out, "llama")
    writer.add_name("tiny-random-llama")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_layer_norm_rms_eps(RMS_EPS)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    n_vocab = copy_vocab(writer, vocab_file) if vocab_file else made_up_vocab(writer)
    writer.add_vocab_size(n_vocab)

    rng = np.random.default_rng(seed)

    def weight(*shape: int, dtype: type = np.float32) -> np.ndarray:
        # numpy shapes are ggml's ne reversed: (rows = outputs, columns = inputs).
        return (rng.standard_normal(shape) * 0.02).astype(dtype)

    n_embd_head = N_EMBD // N_HEAD
    ones = np.ones(N_EMBD, dtype=np.float32)
    writer.add_tensor("token_embd.weight", weight(n_vocab, N_EMBD, dtype=np.float16))
    for i in range(N_LAYER):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones)
        writer.add_tensor(f"blk.{i}.attn_q.weight", weight(N_HEAD * n_embd_head, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weight(N_HEAD_KV * n_embd_head, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weight(N_HEAD_KV * n_embd_head, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weight(N_EMBD, N_HEAD * n_embd_head))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones)
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", weight(n_vocab, N_EMBD, dtype=np.float16))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the GGUF file to write")
    parser.add_argument("--vocab", type=Path, help="a vocab-only GGUF file to copy")
    parser.add_argument("--seed", type=int, default=0, help="the weights' random seed")
    args = parser.parse_args(argv)
    if args.vocab is not None and not args.vocab.is_file():
        parser.error(f"no vocab file at {args.vocab}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_model(args.out, args.vocab, args.seed)
    size = args.out.stat().st_size / 1e6
    print(f"tiny_gguf: wrote {args.out} ({size:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
