#!/usr/bin/env bash
# Install the Debian packages listed in $1 (comments and blank lines ignored) that are missing.
# apt-get update runs only when something is missing, so a prepared machine pays nothing. apt waits
# for the lock (up to 10 min): the kit, started in the background by `make test`, may hold it.
set -euo pipefail
mapfile -t wanted < <(grep -v '^\s*#' "$1" | tr -s ' \t' '\n' | grep -v '^$')
missing=()
for package in "${wanted[@]}"; do
	dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages: ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
	exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
