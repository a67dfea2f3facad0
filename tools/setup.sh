#!/usr/bin/env bash
# Installs what ulpscope needs to build and test on Debian 12, and nothing
# when it is all there already.  Run as root (or with sudo on PATH).
set -euo pipefail

packages=(
	build-essential cmake pkg-config python3 python3-venv
	libmpfr-dev libmpfi-dev libgmp-dev libopenblas-dev libhdf5-dev
	libcmocka-dev python3-h5py python3-numpy python3-pandas
	libopenmpi-dev openmpi-bin
	chromium
	libprotobuf-c-dev protobuf-c-compiler
)
if [ "${USC_WITH_FUZZ:-0}" = 1 ]; then
	packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	sudo_cmd=()
	if [ "$(id -u)" != 0 ]; then
		sudo_cmd=(sudo)
	fi
	export DEBIAN_FRONTEND=noninteractive
	"${sudo_cmd[@]}" apt-get update -qq
	"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
