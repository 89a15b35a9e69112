"""Optional integrations with tracing and evaluation platforms.

Each submodule is imported explicitly (``langchain_evals_port.integrations.langsmith``);
``import langchain_evals_port`` imports none of them.
"""
