# Lean build of llama-cpp-python for wtb's local model (README "Quick start", .ci/install-local).
#
# Passed as -DCMAKE_PROJECT_llama.cpp_INCLUDE=<this file>, so CMake runs it right after llama.cpp's own
# project() call. llama-cpp-python forces LLAMA_BUILD_COMMON=ON in the cache, but its Python package only
# loads libllama, libggml* and (for images) libmtmd: the "common" helper library (chat templates, argument
# parsing, downloads) and the HTTP library it pulls in are never used. A normal variable shadows the cached
# option inside llama.cpp's directory, so neither is configured or compiled. With -DLLAVA_BUILD=OFF as well
# (no multimodal library: wtb sends text only) this removes about 60% of the compile (measured: README
# "Quick start, measured").
set(LLAMA_BUILD_COMMON OFF)
