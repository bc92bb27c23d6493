#!/bin/sh
# venv.sh DIR — a Python environment for `ctest -L truth` (test/models/arch_truth.py,
# gguf_gen.py): CPU use of torch and transformers, pinned to the versions truth.tsv was written
# with, and llama.cpp's `gguf` package that wrote gguf/*.gguf.
#
# PyPI's torch wheel for Linux is built for CUDA and asks for every NVIDIA library as a
# dependency (about 3 GB). Building models on the meta device needs none of their code, only
# that `import torch` finds the libraries libtorch links: this installs torch without its
# dependencies, then the pure-Python ones and the four NVIDIA libraries the link asks for
# that the CUDA toolkit (ci/install-deps.sh) does not bring (about 1 GB in all). Measured on
# the 2-core CI machine: 2-3 minutes, most of it the 540 MB torch wheel; nothing when DIR is
# already there. Then: cmake -DVRAMKIT_TRUTH_PYTHON=DIR/bin/python ... && ctest -L truth.
set -eu
dir=${1:?usage: venv.sh DIR}
# reused only when it holds the pinned versions (a venv made for an older pin is made again)
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c '
import importlib.metadata as m, sys
want = {"torch": "2.15.0", "transformers": "5.24.0", "gguf": "0.19.0"}
sys.exit(any(m.version(k).split("+")[0] != v for k, v in want.items()))' 2>/dev/null; then
  exit 0
fi
rm -rf "$dir"
python3 -m venv "$dir"
pip="$dir/bin/python -m pip install -q --disable-pip-version-check"
$pip --no-deps torch==2.15.0
$pip --no-deps nvidia-cufile==1.17.1.22 nvidia-cusparselt-cu13==0.8.1 \
  nvidia-nvshmem-cu13==3.7.2 nvidia-nccl-cu13==2.30.7
$pip filelock sympy networkx jinja2 fsspec typing_extensions numpy safetensors \
  transformers==5.24.0 gguf==0.19.0
"$dir/bin/python" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
