"""o200k_base from the shared tokenizer file, offline (no download, no cache lookup)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_o200k(tokenizers: Path) -> Any:
    """A ``tiktoken.Encoding`` for o200k_base read from ``tokenizers/o200k_base.tiktoken``."""
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    ranks = tiktoken.load.load_tiktoken_bpe(str(tokenizers / "o200k_base.tiktoken"))
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    try:
        spec = public.o200k_base()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)
