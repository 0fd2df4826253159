"""Seed a kit Nextcloud with the files and contacts volume of issue 30 (alice's account).

    .venv/bin/python bench/files_volume_seed.py /var/tmp/nextcloud-i30-files

50,000 files: `Big/` holds 10,000 of them, `Tree/dNNN/` the rest (200 folders); `Small/` holds
20. The files are written into alice's data directory and indexed with `occ files:scan` (WebDAV
bulk upload took about a minute per 500 files on a loaded 2-core machine; the scan indexes all
50,000 in a few minutes, and what is measured, Nextcloud's file cache, is the same). 2,000
contacts go up with CardDAV PUT, one in five with a 24 KB photo. A few shares of `Small/` and
`Big/` files. Idempotent: a marker file says it is done.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

WORDS = [
    "garden",
    "report",
    "budget",
    "invoice",
    "holiday",
    "photo",
    "notes",
    "draft",
    "summary",
    "meeting",
    "plan",
    "river",
]
FIRST = [
    "Anna",
    "Ben",
    "Clara",
    "David",
    "Eva",
    "Felix",
    "Greta",
    "Hugo",
    "Ida",
    "Jonas",
    "Karla",
    "Lena",
    "Max",
    "Nora",
    "Otto",
    "Paula",
]
LAST = [
    "Meier",
    "Schmidt",
    "Fischer",
    "Weber",
    "Wagner",
    "Becker",
    "Hoffmann",
    "Koch",
    "Richter",
    "Klein",
    "Wolf",
    "Neumann",
]


def file_names() -> list[str]:
    names = [f"Big/{WORDS[i % 12]}-{i:05}.txt" for i in range(10_000)]
    names += [f"Tree/d{i // 200:03}/{WORDS[(i * 7) % 12]}-{i:05}.md" for i in range(40_000 - 20)]
    names += [f"Small/{WORDS[i % 12]}-{i:02}.txt" for i in range(20)]
    return names


def vcard(i: int) -> tuple[str, str]:
    uid = f"seed-{i:04}"
    first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
    lines = [
        "BEGIN:VCARD",
        "VERSION:3.0",
        f"UID:{uid}",
        f"FN:{first} {last} {i}",
        f"N:{last};{first};;;",
        f"EMAIL;TYPE=work:{first.lower()}.{last.lower()}{i}@example.org",
        f"TEL;TYPE=cell:+49 30 {1000000 + i}",
        f"ORG:{WORDS[i % 12].capitalize()} GmbH",
        f"NOTE:Seeded contact number {i}",
    ]
    if i % 5 == 0:
        photo = base64.b64encode(os.urandom(18_000)).decode()
        lines.append("PHOTO;ENCODING=b;TYPE=JPEG:" + photo)
    lines.append("END:VCARD")
    folded = []
    for line in lines:
        while len(line) > 75:
            folded.append(line[:75])
            line = " " + line[75:]
        folded.append(line)
    return uid, "\r\n".join(folded) + "\r\n"


def main() -> int:
    directory = Path(sys.argv[1])
    config = json.loads((directory / "nextcloud.json").read_text())
    marker = directory / "files-volume-seeded"
    if marker.exists():
        print("already seeded")
        return 0
    user = config["alice"]["user"]
    auth = (user, config["alice"]["app_password"])
    with httpx.Client(base_url=config["url"], auth=auth, timeout=120) as client:
        dav = f"/remote.php/dav/files/{user}"
        folders = ["Big", "Tree", "Small"] + [f"Tree/d{i:03}" for i in range(200)]
        for folder in folders:
            r = client.request("MKCOL", f"{dav}/{folder}")
            if r.status_code not in (201, 405):
                r.raise_for_status()
        files = directory / "data" / user / "files"
        for name in file_names():
            target = files / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f"{name}\n".encode() * 4)
                os.utime(target, (1700000000, 1700000000 + len(name)))
        chown = shutil.which("chown") or "chown"
        subprocess.run([chown, "-R", "www-data:www-data", str(files)], check=True)
        subprocess.run([str(directory / "occ"), "files:scan", user], check=True, capture_output=True)
        print("files: 50000", flush=True)
        book = f"/remote.php/dav/addressbooks/users/{user}/contacts"

        def put(i: int) -> None:
            uid, text = vcard(i)
            r = client.put(f"{book}/{uid}.vcf", content=text.encode(), headers={"Content-Type": "text/vcard"})
            if r.status_code not in (201, 204):
                r.raise_for_status()

        for i in range(2000):  # one at a time: the kit's SQLite refuses parallel writes ("locked")
            put(i)
        print("contacts: 2000", flush=True)
        ocs = "/ocs/v2.php/apps/files_sharing/api/v1/shares"
        headers = {"OCS-APIRequest": "true", "Accept": "application/json"}
        for i in range(20):
            kind = {"path": f"/Small/{WORDS[i % 12]}-{i:02}.txt", "shareType": 3}
            if i % 2:
                kind = {"path": f"/Big/{WORDS[i % 12]}-{i:05}.txt", "shareType": 0, "shareWith": "admin"}
            client.post(ocs, json=kind, headers=headers).raise_for_status()
        print("shares: 20", flush=True)
    marker.write_text("done\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
