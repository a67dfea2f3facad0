#!/usr/bin/env bash
# Runs pytest files of python/tests with the interpreter USC_PYTHON
# (tools/pyenv.sh): the package from python/ on PYTHONPATH and the build's
# libulpscope.so through ULPSCOPE_LIB, both set by tests/python/tests.cmake.
# Without USC_PYTHON the test is skipped (exit 77), saying why.
# usage: run_pytest.sh TEST_FILE...
set -u
if [ -z "${USC_PYTHON:-}" ]; then
	echo "skipped: USC_PYTHON is not set (export USC_PYTHON=\$(tools/pyenv.sh))"
	exit 77
fi
cd "$USC_SOURCE_DIR/python/tests" || exit 1
exec "$USC_PYTHON" -m pytest -q -p no:cacheprovider "$@"
