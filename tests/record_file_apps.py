"""Record the file apps' DAV exchanges (trash bin, versions, system tags, comments) with a real
Nextcloud of the kit into tests/fixtures/nextcloud/ (29) or tests/fixtures/nextcloud34/ (34). Run by
hand, never by the suite, on a fresh seed state:

    $NEXTCLOUD_KIT reset /var/tmp/nc-rec && .venv/bin/python -m tests.record_file_apps /var/tmp/nc-rec

As alice: a file with three versions (written in three different seconds, since versions are named
by their second), a deleted file, a tag and a comment. Secrets become REDACTED, the host
127.0.0.1:8080 (`record_more.Recorder`).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from tests.record_more import Recorder
from tests.recordings import FIXTURES, FIXTURES_34

XML = {"Content-Type": "application/xml; charset=utf-8"}
JSON = {"Content-Type": "application/json"}
FILES = "/remote.php/dav/files/alice"
NS = 'xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"'


class FileAppsRecorder(Recorder):
    def __init__(self, instance: Path) -> None:
        super().__init__(instance)
        self.out = FIXTURES_34 if self.config["version"].startswith("34.") else FIXTURES

    def record(self, name: str, method: str, path: str, **kwargs: object) -> tuple[int, dict[str, str], str]:
        return self.call(name, method, path, user="alice", **kwargs)  # type: ignore[arg-type]

    def put(self, path: str, data: str) -> None:
        self.call("_scratch", "PUT", f"{FILES}/{path}", body=data, user="alice")
        (self.out / "_scratch.txt").unlink()


def main(instance: Path) -> None:
    rec = FileAppsRecorder(instance)
    for data in ("one", "two two", "three"):
        rec.put("v.txt", data)
        second = int(time.time())  # after the answer: the server's stamp is not later than this
        while int(time.time()) == second:  # the next version in a later second
            time.sleep(0.05)
    _, _, text = rec.record(
        "file_apps_fileid",
        "PROPFIND",
        f"{FILES}/v.txt",
        headers={**XML, "Depth": "0"},
        body=f'<?xml version="1.0"?><d:propfind {NS}><d:prop><oc:fileid/></d:prop></d:propfind>',
    )
    found = re.search(r"<oc:fileid>(\d+)<", text)
    assert found, text
    file_id = found.group(1)
    rec.record(
        "file_apps_versions",
        "PROPFIND",
        f"/remote.php/dav/versions/alice/versions/{file_id}",
        headers={**XML, "Depth": "1"},
        body=f'<?xml version="1.0"?><d:propfind {NS}><d:prop><d:getlastmodified/><d:getcontentlength/>'
        "<d:getcontenttype/><d:resourcetype/><nc:version-label/><nc:version-author/></d:prop></d:propfind>",
    )
    rec.put("t.txt", "trash me")
    rec.call("_scratch", "DELETE", f"{FILES}/t.txt", user="alice")
    (rec.out / "_scratch.txt").unlink()
    rec.record(
        "file_apps_trash",
        "PROPFIND",
        "/remote.php/dav/trashbin/alice/trash",
        headers={**XML, "Depth": "1"},
        body=f'<?xml version="1.0"?><d:propfind {NS}><d:prop><nc:trashbin-filename/>'
        "<nc:trashbin-original-location/><nc:trashbin-deletion-time/><nc:trashbin-deleted-by-id/>"
        "<oc:fileid/><oc:size/><d:getcontentlength/><d:resourcetype/></d:prop></d:propfind>",
    )
    _, headers, _ = rec.record(
        "file_apps_tag_create",
        "POST",
        "/remote.php/dav/systemtags/",
        headers=JSON,
        body=json.dumps({"name": "Project X", "userVisible": True, "userAssignable": True}),
    )
    tag = headers["content-location"].rsplit("/", 1)[1]
    rec.record("file_apps_tag_assign", "PUT", f"/remote.php/dav/systemtags-relations/files/{file_id}/{tag}")
    rec.record(
        "file_apps_tag_assign_again", "PUT", f"/remote.php/dav/systemtags-relations/files/{file_id}/{tag}"
    )
    rec.record(
        "file_apps_tag_files",
        "REPORT",
        f"{FILES}/",
        headers=XML,
        body=f'<?xml version="1.0"?><oc:filter-files {NS}><d:prop><oc:fileid/><d:getlastmodified/><oc:size/>'
        f"<d:resourcetype/><d:getcontenttype/></d:prop><oc:filter-rules><oc:systemtag>{tag}</oc:systemtag>"
        "</oc:filter-rules><d:limit><d:nresults>5</d:nresults><nc:firstresult>0</nc:firstresult></d:limit>"
        "</oc:filter-files>",
    )
    rec.record(
        "file_apps_comment_add",
        "POST",
        f"/remote.php/dav/comments/files/{file_id}",
        headers=JSON,
        body=json.dumps({"actorType": "users", "verb": "comment", "message": "hello @admin"}),
    )
    rec.record(
        "file_apps_comments",
        "REPORT",
        f"/remote.php/dav/comments/files/{file_id}",
        headers=XML,
        body='<?xml version="1.0"?><oc:filter-comments xmlns:oc="http://owncloud.org/ns"><oc:limit>5</oc:limit>'
        "<oc:offset>0</oc:offset></oc:filter-comments>",
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
