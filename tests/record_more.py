"""Record CardDAV, OCS Share API and unified search exchanges with the real Nextcloud of the kit
into tests/fixtures/nextcloud/ (the format of its README). Run by hand, never by the suite:

    $NEXTCLOUD_KIT reset /var/tmp/nc-rec && .venv/bin/python -m tests.record_more /var/tmp/nc-rec

Needs a fresh seed state: it creates the group `family` (with alice) through occ, a folder
`Taxes`, a note and files, then runs the sequences the contract tests replay. Secrets (passwords,
cookies, share tokens and password hashes) become REDACTED; the host becomes 127.0.0.1:8080.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.recordings import FIXTURES

CURL = "/usr/bin/curl"
RECORDED_HOST = "http://127.0.0.1:8080"
SHARE_PASSWORDS = {"Str0ng-Passw0rd-42", "An0ther-Passw0rd-43"}
OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}
JSON = {**OCS, "Content-Type": "application/json"}
VCARD = {"Content-Type": "text/vcard; charset=utf-8"}
XML = {"Content-Type": "application/xml; charset=utf-8", "Depth": "1"}
SHARES = "/ocs/v2.php/apps/files_sharing/api/v1/shares"

# A 1x1 PNG, base64: a contact photo small enough to read in a recording.
PHOTO = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
JULIA = (
    "BEGIN:VCARD\nVERSION:3.0\nUID:julia-rec-1\nFN:Julia Müller\nN:Müller;Julia;;;\n"
    "EMAIL;TYPE=WORK:julia@example.org\nTEL;TYPE=CELL:+49 30 1234567\nORG:Boiler GmbH\n"
    "CATEGORIES:Family,Friends\n"
    f"PHOTO;ENCODING=b;TYPE=PNG:{PHOTO}\nX-MCP-CUSTOM:kept as is\nEND:VCARD\n"
)
KENJI = (
    "BEGIN:VCARD\nVERSION:4.0\nUID:kenji-rec-2\nFN:山田 健二\nN:山田;健二;;;\n"
    "EMAIL:kenji@example.jp\nTEL;VALUE=uri:tel:+81-3-5555-0100\nEND:VCARD\n"
)


def _query(prop: str, text: str, match: str = "contains") -> str:
    return (
        '<?xml version="1.0"?><card:addressbook-query xmlns:d="DAV:" '
        'xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><card:address-data/></d:prop>'
        f'<card:filter test="anyof"><card:prop-filter name="{prop}">'
        f'<card:text-match collation="i;unicode-casemap" match-type="{match}">{text}</card:text-match>'
        "</card:prop-filter></card:filter></card:addressbook-query>"
    )


class Recorder:
    def __init__(self, instance: Path) -> None:
        self.config = json.loads((instance / "nextcloud.json").read_text())
        self.instance = instance
        self.url = self.config["url"]
        self.secrets = {self.config[u][k] for u in ("admin", "alice") for k in ("password", "app_password")}
        self.out = FIXTURES  # where recordings are written (a script for 34 points it at 34's)

    def occ(self, *args: str) -> None:
        subprocess.run([str(self.instance / "occ"), *args], check=True, capture_output=True)

    def call(
        self,
        name: str,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: str | None = None,
        user: str = "admin",
    ) -> tuple[int, dict[str, str], str]:
        login = self.config[user]
        args = ["-s", "-i", "-X", method]
        shown: list[str] = []
        for key, value in (headers or {}).items():
            args += ["-H", f"{key}: {value}"]
            shown += ["-H", f"{key}: {value}"]
        if body is not None:
            args += ["--data-binary", body]
            shown += ["--data-binary", body]
        if user != "admin":
            shown += ["-u", f"{user}:REDACTED"]
        args += ["-u", f"{login['user']}:{login['app_password']}", self.url + path]
        raw = subprocess.run([CURL, *args], check=True, capture_output=True).stdout.decode()
        head, _, text = raw.replace("\r\n", "\n").partition("\n\n")
        status = int(head.split()[1])
        response_headers = {
            k.strip().lower(): v.strip()
            for k, _, v in (line.partition(":") for line in head.splitlines()[1:])
        }
        record = f"### REQUEST: {method} {self.url}{path}\n"
        record += "".join(f"### ARG: {a}\n" for a in shown)
        record += "### RESPONSE:\n" + head + "\n\n" + text
        (self.out / f"{name}.txt").write_text(self.redact(record), encoding="utf-8")
        print(name, status)
        return status, response_headers, text

    def redact(self, text: str) -> str:
        text = text.replace(self.url, RECORDED_HOST)
        text = text.replace(self.url.replace("/", "\\/"), RECORDED_HOST.replace("/", "\\/"))
        for secret in self.secrets | SHARE_PASSWORDS:
            text = text.replace(secret, "REDACTED")
        text = re.sub(r"(Set-Cookie: [^=]+=)[^;]*", r"\1REDACTED", text)
        text = re.sub(r'"(password|share_with)":"3\|\$argon2[^"]*"', r'"\1":"REDACTED"', text)
        text = re.sub(r'"token":"[^"]+"', '"token":"REDACTED"', text)
        return re.sub(r"(/|\\/)s(/|\\/)[A-Za-z0-9]{15}", r"\1s\2REDACTED", text)


def carddav(rec: Recorder) -> None:
    book = "/remote.php/dav/addressbooks/users/admin/contacts/"
    principal = (
        '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">'
        "<d:prop><card:addressbook-home-set/></d:prop></d:propfind>"
    )
    rec.call(
        "carddav_principal_home",
        "PROPFIND",
        "/remote.php/dav/principals/users/admin/",
        headers={**XML, "Depth": "0"},
        body=principal,
    )
    books = (
        '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/">'
        "<d:prop><d:resourcetype/><d:displayname/><cs:getctag/><d:current-user-privilege-set/>"
        "</d:prop></d:propfind>"
    )
    rec.call(
        "carddav_propfind_books",
        "PROPFIND",
        "/remote.php/dav/addressbooks/users/admin/",
        headers=XML,
        body=books,
    )
    rec.call(
        "carddav_put_card",
        "PUT",
        book + "julia-rec-1.vcf",
        headers={**VCARD, "If-None-Match": "*"},
        body=JULIA,
    )
    rec.call(
        "carddav_put_card_again_412",
        "PUT",
        book + "julia-rec-1.vcf",
        headers={**VCARD, "If-None-Match": "*"},
        body=JULIA,
    )
    rec.call(
        "carddav_put_card_v4",
        "PUT",
        book + "kenji-rec-2.vcf",
        headers={**VCARD, "If-None-Match": "*"},
        body=KENJI,
    )
    _, headers, _ = rec.call("carddav_get_card", "GET", book + "julia-rec-1.vcf")
    rec.call("carddav_get_card_v4", "GET", book + "kenji-rec-2.vcf")
    rec.call(
        "carddav_get_card_v4_accept",
        "GET",
        book + "kenji-rec-2.vcf",
        headers={"Accept": "text/vcard; version=4.0"},
    )
    rec.call("carddav_report_query_tel", "REPORT", book, headers=XML, body=_query("TEL", "1234567"))
    rec.call("carddav_report_query_email", "REPORT", book, headers=XML, body=_query("EMAIL", "JULIA@example"))
    rec.call("carddav_report_query_fn", "REPORT", book, headers=XML, body=_query("FN", "müller"))
    rec.call("carddav_report_query_fn_cjk", "REPORT", book, headers=XML, body=_query("FN", "山田"))
    rec.call("carddav_report_query_org", "REPORT", book, headers=XML, body=_query("ORG", "boiler"))
    rec.call(
        "carddav_report_query_categories", "REPORT", book, headers=XML, body=_query("CATEGORIES", "family")
    )
    rec.call("carddav_report_query_none", "REPORT", book, headers=XML, body=_query("EMAIL", "nobody@nowhere"))
    etag = headers["etag"]
    updated = JULIA.replace("ORG:Boiler GmbH", "ORG:Heating AG")
    _, after, _ = rec.call(
        "carddav_update_card_ifmatch",
        "PUT",
        book + "julia-rec-1.vcf",
        headers={**VCARD, "If-Match": etag},
        body=updated,
    )
    rec.call(
        "carddav_update_card_stale_412",
        "PUT",
        book + "julia-rec-1.vcf",
        headers={**VCARD, "If-Match": etag},
        body=JULIA,
    )
    rec.call("carddav_delete_card_stale_412", "DELETE", book + "julia-rec-1.vcf", headers={"If-Match": etag})
    rec.call("carddav_delete_card", "DELETE", book + "julia-rec-1.vcf", headers={"If-Match": after["etag"]})
    rec.call("carddav_get_card_404", "GET", book + "julia-rec-1.vcf")


def shares(rec: Recorder) -> None:
    rec.occ("group:add", "family")
    rec.occ("group:adduser", "family", "alice")
    subprocess.run(
        [
            CURL,
            "-s",
            "-X",
            "MKCOL",
            "-u",
            f"admin:{rec.config['admin']['app_password']}",
            rec.url + "/remote.php/dav/files/admin/Taxes",
        ],
        check=True,
    )
    link = {
        "path": "/Taxes",
        "shareType": 3,
        "password": "Str0ng-Passw0rd-42",
        "expireDate": "2026-12-31",
        "permissions": 1,
    }
    _, _, text = rec.call(
        "shares_create_link", "POST", SHARES + "?format=json", headers=JSON, body=json.dumps(link)
    )
    link_id = json.loads(text)["ocs"]["data"]["id"]
    user = {"path": "/Taxes", "shareType": 0, "shareWith": "alice", "permissions": 1}
    _, _, text = rec.call(
        "shares_create_user", "POST", SHARES + "?format=json", headers=JSON, body=json.dumps(user)
    )
    user_id = json.loads(text)["ocs"]["data"]["id"]
    group = {"path": "/welcome.txt", "shareType": 1, "shareWith": "family", "permissions": 3}
    rec.call("shares_create_group", "POST", SHARES + "?format=json", headers=JSON, body=json.dumps(group))
    rec.call(
        "shares_create_missing_path_404",
        "POST",
        SHARES + "?format=json",
        headers=JSON,
        body=json.dumps({**user, "path": "/no-such-folder"}),
    )
    rec.call(
        "shares_create_unknown_user",
        "POST",
        SHARES + "?format=json",
        headers=JSON,
        body=json.dumps({**user, "shareWith": "nobody"}),
    )
    rec.call(
        "shares_create_link_past_expiry",
        "POST",
        SHARES + "?format=json",
        headers=JSON,
        body=json.dumps({**link, "expireDate": "2020-01-01"}),
    )
    rec.call("shares_of_path", "GET", SHARES + "?format=json&path=%2FTaxes&reshares=true", headers=OCS)
    rec.call("shares_all_mine", "GET", SHARES + "?format=json", headers=OCS)
    rec.call(
        "shares_shared_with_me", "GET", SHARES + "?format=json&shared_with_me=true", headers=OCS, user="alice"
    )
    rec.call("shares_get_one", "GET", f"{SHARES}/{user_id}?format=json", headers=OCS)
    rec.call(
        "shares_update_permissions",
        "PUT",
        f"{SHARES}/{user_id}?format=json",
        headers=JSON,
        body=json.dumps({"permissions": 15}),
    )
    rec.call(
        "shares_update_expiry",
        "PUT",
        f"{SHARES}/{link_id}?format=json",
        headers=JSON,
        body=json.dumps({"expireDate": "2027-01-15"}),
    )
    rec.call(
        "shares_update_password",
        "PUT",
        f"{SHARES}/{link_id}?format=json",
        headers=JSON,
        body=json.dumps({"password": "An0ther-Passw0rd-43"}),
    )
    rec.call("shares_delete", "DELETE", f"{SHARES}/{link_id}?format=json", headers=OCS)
    rec.call("shares_delete_again_404", "DELETE", f"{SHARES}/{link_id}?format=json", headers=OCS)
    rec.call("shares_get_404", "GET", f"{SHARES}/99999?format=json", headers=OCS)


def unified_search(rec: Recorder) -> None:
    app = rec.config["admin"]["app_password"]
    note = {"title": "Boiler service", "content": "Call the plumber about the radiator pressure"}
    subprocess.run(
        [
            CURL,
            "-s",
            "-u",
            f"admin:{app}",
            "-H",
            "Content-Type: application/json",
            "--data",
            json.dumps(note),
            rec.url + "/index.php/apps/notes/api/v1/notes",
        ],
        check=True,
        capture_output=True,
    )
    for name, text in (("boiler-manual.txt", "bleed the radiators"), ("house/boiler-invoice.txt", "paid")):
        if "/" in name:
            subprocess.run(
                [
                    CURL,
                    "-s",
                    "-X",
                    "MKCOL",
                    "-u",
                    f"admin:{app}",
                    rec.url + "/remote.php/dav/files/admin/house",
                ],
                check=True,
                capture_output=True,
            )
        subprocess.run(
            [
                CURL,
                "-s",
                "-X",
                "PUT",
                "-u",
                f"admin:{app}",
                "--data-binary",
                text,
                rec.url + f"/remote.php/dav/files/admin/{name}",
            ],
            check=True,
            capture_output=True,
        )
    search = "/ocs/v2.php/search/providers"
    rec.call("search_providers", "GET", search + "?format=json", headers=OCS)
    rec.call("search_files", "GET", search + "/files/search?format=json&term=boiler&limit=2", headers=OCS)
    rec.call(
        "search_files_page",
        "GET",
        search + "/files/search?format=json&term=boiler&limit=2&cursor=2",
        headers=OCS,
    )
    rec.call(
        "search_files_content_word", "GET", search + "/files/search?format=json&term=radiators", headers=OCS
    )
    rec.call("search_notes", "GET", search + "/notes/search?format=json&term=boiler", headers=OCS)
    rec.call("search_unknown_provider", "GET", search + "/nope/search?format=json&term=boiler", headers=OCS)
    rec.call("search_settings", "GET", search + "/settings/search?format=json&term=password", headers=OCS)


if __name__ == "__main__":
    recorder = Recorder(Path(sys.argv[1]))
    carddav(recorder)
    shares(recorder)
    unified_search(recorder)
