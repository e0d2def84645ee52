"""The transformers backend's plumbing with a tiny randomly initialised model built here (a
config and a word-level tokenizer saved to a temporary directory; nothing is downloaded): it
loads, generates through `generate`, and DICE refuses its output clearly because it is no kernel.
A diffusion-style model is stood in for by a subclass that adds `diffusion_generate`."""
from __future__ import annotations

import shutil

import pytest

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from replies import TOPK  # noqa: E402

from dice_engine import CUDAGenerator  # noqa: E402
from dice_engine.api import GenerationError  # noqa: E402
from dice_engine.llm import LLMConfig, ModelError, make_backend  # noqa: E402

WORDS = ["<unk>", "<pad>", "<eos>", "user:", "assistant:", "system:", "write", "a", "kernel", "__global__",
         "void", "float", "x", "y", "{", "}", "(", ")", ";"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny_llama")
    vocab = {w: i for i, w in enumerate(WORDS)}
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=model, unk_token="<unk>",
                                                     pad_token="<pad>", eos_token="<eos>")
    tokenizer.save_pretrained(folder)
    config = transformers.LlamaConfig(vocab_size=len(WORDS), hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                      max_position_embeddings=4096, pad_token_id=1, eos_token_id=2)
    transformers.set_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def config(path, **kw) -> LLMConfig:
    return LLMConfig(backend="transformers", model_path=str(path), max_tokens=12, temperature=0.0, **kw)


def test_a_local_model_loads_and_generates(tiny_model):
    backend = make_backend(config(tiny_model))
    pieces: list[str] = []
    text = backend.complete([{"role": "user", "content": "write a kernel"}], on_text=pieces.append)
    assert isinstance(text, str) and pieces == [text]
    assert set(text.split()) <= set(WORDS)           # words of its own vocabulary, random but real


def test_its_output_is_refused_clearly_when_it_is_no_kernel(tiny_model):
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    generator = CUDAGenerator("sm_90", default_shape=None, llm=config(tiny_model, rounds=1))
    with pytest.raises(GenerationError) as info:
        generator.generate(TOPK)
    message = str(info.value)
    assert message.startswith("the model gave no acceptable kernel in 2 rounds; last: ")
    assert "holds no CUDA code" in message or "does not define the launcher" in message
    assert "\n" not in message


def test_a_diffusion_models_own_method_gets_steps_and_block_length(tiny_model, monkeypatch):
    seen: dict = {}

    def diffusion_generate(self, input_ids, *, max_new_tokens, steps, block_length, temperature,
                           attention_mask=None):
        seen.update(steps=steps, block_length=block_length, max_new_tokens=max_new_tokens)
        return self.generate(input_ids, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=1,
                             attention_mask=attention_mask)

    monkeypatch.setattr(transformers.LlamaForCausalLM, "diffusion_generate", diffusion_generate,
                        raising=False)
    backend = make_backend(config(tiny_model, diffusion_steps=64, block_length=8))
    backend.complete([{"role": "user", "content": "write a kernel"}])
    assert seen == {"steps": 64, "block_length": 8, "max_new_tokens": 12}


def test_a_folder_without_a_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelError, match="is not a model directory"):
        make_backend(config(tmp_path)).complete([{"role": "user", "content": "x"}])
