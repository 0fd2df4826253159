#!/usr/bin/env bash
# `make test` runs this first: the real-Nextcloud tests need the kit, and a clone without it should
# hear so in a second, not after installing everything and twenty minutes of errors.
set -euo pipefail
cd "$(dirname "$0")/.."
kit=${NEXTCLOUD_KIT:-../shared/nextcloud/nextcloud}
[ -f "$kit" ] && [ -x "$kit" ] && exit 0
cat >&2 <<MESSAGE
make test: the real Nextcloud kit is missing (looked for ${kit}).

The suite runs each toolset test on the Nextcloud double and on real Nextcloud 29.0.6 and 34.0.1
(with Deck, Talk, Tables, Collectives and more), which a kit starts on 127.0.0.1: one bash script,
\`nextcloud\`, beside its Nextcloud tarballs. The kit is not part of this repository (its builds
are large); CI keeps it beside the checkout, as ../shared/nextcloud/nextcloud.

  - With a copy of the kit: put it at ../shared/nextcloud/ or set NEXTCLOUD_KIT=/path/to/nextcloud.
    It needs Debian 12 and root (it installs Debian's nginx and php-fpm and runs them as www-data);
    the first run installs four instances under /var/tmp/nextcloud-mcp-tests (a few minutes).
  - Without it: \`make test-fast\` runs lint, types and every test that needs neither a real
    Nextcloud nor a browser (the double only); CI runs the rest.
  - Against a Nextcloud you run yourself (say the official container image): not possible yet.
    The real-Nextcloud tests put the instance back to its seed state before each test, which only
    the kit can do, and expect its users admin and alice (docs/ADR/0053 and 0068).
MESSAGE
exit 1
