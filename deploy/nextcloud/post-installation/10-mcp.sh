#!/bin/sh
# Post-installation hook of the official Nextcloud image (docker-compose.yml mounts this folder
# at /docker-entrypoint-hooks.d/post-installation). It runs once, as www-data, right after the
# automated install, with the container's environment.
set -eu

: "${NEXTCLOUD_ADMIN_USER:?is set in docker-compose.yml}"
: "${NEXTCLOUD_ADMIN_PASSWORD:?is set in docker-compose.yml}"

# On the volume the `mcp` service mounts read-only; its NEXTCLOUD_PASSWORD_FILE names this file.
APP_PASSWORD_FILE=/var/www/data/app-password

# Nextcloud does not ship the Notes app; the server's notes tools need it.
php /var/www/html/occ app:install notes || php /var/www/html/occ app:enable notes

# An app password rather than the login password: cheaper per request, and revocable on its own
# (Settings > Security > Devices & sessions). The command prints "app password:", then the token.
output=$(NC_PASS="$NEXTCLOUD_ADMIN_PASSWORD" php /var/www/html/occ user:add-app-password \
    --password-from-env "$NEXTCLOUD_ADMIN_USER")
token=$(printf '%s\n' "$output" | tail -n 1)
case $token in
    '' | *[!A-Za-z0-9]*)
        echo "10-mcp.sh: unexpected output from occ user:add-app-password" >&2
        exit 1
        ;;
esac

# 0640: readable by the www-data group, which the `mcp` service joins (group_add: 33), and no
# one else. Written beside the target and renamed, so a reader never sees half a file.
(
    umask 027
    printf '%s\n' "$token" > "$APP_PASSWORD_FILE.tmp"
    mv -f "$APP_PASSWORD_FILE.tmp" "$APP_PASSWORD_FILE"
)
echo "10-mcp.sh: Notes enabled; app password for $NEXTCLOUD_ADMIN_USER written to $APP_PASSWORD_FILE"
