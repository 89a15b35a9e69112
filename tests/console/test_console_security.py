"""The console's defences over real HTTP (uvicorn on 127.0.0.1, httpx and raw sockets): only
the hosts it is served on are answered (DNS rebinding), a POST from another origin is refused
whatever its CSRF token, the CSRF token is signed by the console's own secret, and bad or
oversized input is a 400, 401, 403 or 413, never a 500, a huge body refused before it is read.
The same attacks from a browser are in ``test_console_security_browser.py``."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from _browser import serving
from _seed import seed_small

from langchain_evals_port.storage import SqliteLedger

pytest.importorskip("uvicorn", reason="the console extra is not installed")

from langchain_evals_port.console import create_app

CSRF_COOKIE = "langchain_evals_csrf"


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[SqliteLedger, str]]:
    """A ``seed_small`` ledger and the base URL of the console serving it."""
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    with serving(create_app(ledger, allowed_hosts=["console.test"])) as base:
        yield ledger, base
    ledger.close()


def csrf_of(client: httpx.Client, base: str) -> str:
    """The CSRF token a page's form carries (and its cookie now holds)."""
    page = client.get(f"{base}/failed")
    assert page.status_code == 200
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


# --- item 8: DNS rebinding -------------------------------------------------------------------


@pytest.mark.parametrize("host", ["rebind.attacker.test", "127.0.0.1.attacker.test", ""])
def test_a_host_the_console_is_not_served_on_is_refused(
    seeded: tuple[SqliteLedger, str], host: str
) -> None:
    _, base = seeded
    port = urlsplit(base).port
    page = httpx.get(f"{base}/interactions/i-0", headers={"Host": f"{host}:{port}"})
    assert page.status_code == 400
    assert "Where is my order" not in page.text


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "console.test", "LOCALHOST"])
def test_the_hosts_the_console_is_served_on_are_answered(
    seeded: tuple[SqliteLedger, str], host: str
) -> None:
    _, base = seeded
    port = urlsplit(base).port
    page = httpx.get(f"{base}/interactions/i-0", headers={"Host": f"{host}:{port}"})
    assert page.status_code == 200
    assert "Where is my order 0" in page.text


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://rebind.attacker.test"},
        {"Origin": "http://127.0.0.1:1"},  # another port of this machine
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # another port is the same site
    ],
)
def test_a_post_from_another_origin_is_refused_with_a_valid_csrf_token(
    seeded: tuple[SqliteLedger, str], headers: dict[str, str]
) -> None:
    ledger, base = seeded
    with httpx.Client() as client:
        csrf = csrf_of(client, base)
        refused = client.post(
            f"{base}/failed/e-tone-failed/retry", data={"csrf_token": csrf}, headers=headers
        )
        assert refused.status_code == 403
        assert "another site" in refused.text
        assert ledger.pending_work() == 1  # only the seeded review

        accepted = client.post(
            f"{base}/failed/e-tone-failed/retry",
            data={"csrf_token": csrf},
            headers={"Origin": base, "Sec-Fetch-Site": "same-origin"},
        )
        assert accepted.status_code == 303
        assert ledger.pending_work() == 2


# --- item 9: CSRF tokens signed by the console ------------------------------------------------


def test_a_csrf_token_the_console_did_not_sign_is_refused_even_in_both_places(
    seeded: tuple[SqliteLedger, str],
) -> None:
    """What a page on another port of 127.0.0.1 can do: write the cookie (cookies ignore
    ports) and post the same value in the form."""
    ledger, base = seeded
    with httpx.Client() as client:
        client.cookies.set(CSRF_COOKIE, "chosen-by-the-attacker", domain="127.0.0.1")
        refused = client.post(
            f"{base}/failed/e-tone-failed/retry", data={"csrf_token": "chosen-by-the-attacker"}
        )
        assert refused.status_code == 403
        assert ledger.pending_work() == 1


def test_a_csrf_token_signed_by_another_console_is_refused(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    try:
        with serving(create_app(ledger)) as other, httpx.Client() as client:
            foreign = csrf_of(client, other)
        with serving(create_app(ledger)) as base, httpx.Client() as client:
            client.cookies.set(CSRF_COOKIE, foreign, domain="127.0.0.1")
            refused = client.post(
                f"{base}/failed/e-tone-failed/retry", data={"csrf_token": foreign}
            )
            assert refused.status_code == 403
            # A page replaces a token it did not sign with one of its own.
            own = csrf_of(client, base)
            assert own != foreign
            assert (
                client.post(
                    f"{base}/failed/e-tone-failed/retry", data={"csrf_token": own}
                ).status_code
                == 303
            )
    finally:
        ledger.close()


# --- item 10: bad input is a 4xx, a huge body is refused unread --------------------------------


@pytest.mark.parametrize("path", ["/failed?cursor=abc", "/interactions?cursor=abc"])
def test_a_malformed_cursor_is_a_400(seeded: tuple[SqliteLedger, str], path: str) -> None:
    _, base = seeded
    page = httpx.get(f"{base}{path}")
    assert page.status_code == 400
    assert "cursor" in page.text


def test_non_ascii_credentials_are_refused_not_a_500(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    try:
        with serving(create_app(ledger, token="s3cret")) as base:
            assert httpx.get(f"{base}/?token=s%C3%A9cret").status_code == 401
            bearer = httpx.get(f"{base}/", headers={"Authorization": "Bearer sécret".encode()})
            assert bearer.status_code == 401
            cookie = httpx.get(
                f"{base}/", headers={"Cookie": "langchain_evals_token=sécret".encode()}
            )
            assert cookie.status_code == 401
            with httpx.Client(headers={"Authorization": "Bearer s3cret"}) as client:
                csrf_of(client, base)
                refused = client.post(
                    f"{base}/failed/e-tone-failed/retry", data={"csrf_token": "jeton-falsifié"}
                )
                assert refused.status_code == 403
                odd = client.post(
                    f"{base}/failed/e-tone-failed/retry",
                    data={"csrf_token": "x"},
                    headers={"Cookie": f"{CSRF_COOKIE}=café".encode()},
                )
                assert odd.status_code == 403
        assert ledger.pending_work() == 1
    finally:
        ledger.close()


def test_a_form_field_over_the_limit_is_a_413(seeded: tuple[SqliteLedger, str]) -> None:
    ledger, base = seeded
    with httpx.Client() as client:
        csrf = csrf_of(client, base)
        for encoded in ("urlencoded", "multipart"):
            note = "x" * 1_100_000
            refused = (
                client.post(
                    f"{base}/interactions/i-3/annotations",
                    data={"csrf_token": csrf, "key": "helpfulness", "note": note},
                )
                if encoded == "urlencoded"
                else client.post(
                    f"{base}/interactions/i-3/annotations",
                    data={"csrf_token": csrf, "key": "helpfulness"},
                    files={"note": ("note.txt", note.encode())},
                )
            )
            assert refused.status_code == 413, encoded
            assert "at most 1 MiB" in refused.text
    assert ledger.annotations(subject_id="i-3") == []


def _status_line(answer: bytes) -> str:
    return answer.split(b"\r\n", 1)[0].decode()


def test_a_huge_post_is_refused_from_its_length_before_its_body_is_read(
    seeded: tuple[SqliteLedger, str],
) -> None:
    _, base = seeded
    port = urlsplit(base).port
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.settimeout(60)  # a bound on failure only: the answer comes before any body
        raw.sendall(
            f"POST /failed/e-tone-failed/retry HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            "Content-Length: 300000000\r\n\r\n".encode()
        )
        assert _status_line(raw.recv(65536)) == "HTTP/1.1 413 Request Entity Too Large"


def test_a_huge_chunked_post_is_refused_once_it_passes_the_limit(
    seeded: tuple[SqliteLedger, str],
) -> None:
    _, base = seeded
    port = urlsplit(base).port
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.settimeout(60)
        raw.sendall(
            f"POST /failed/e-tone-failed/retry HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b"x" * 65536
        for _ in range(17):  # just over 1 MiB, and never the closing chunk
            raw.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        assert _status_line(raw.recv(65536)) == "HTTP/1.1 413 Request Entity Too Large"
