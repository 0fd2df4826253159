"""Small documents built in code for the find index's tests and benchmarks: PDF, DOCX, XLSX, PPTX,
ODT, ODS, ODP, each a valid file the usual readers open, plus hostile ones (zip bombs, entity
bombs, deep nesting, loops). Nothing binary is committed."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

__all__ = [
    "deep_docx",
    "docx",
    "entity_bomb_docx",
    "looping_pdf",
    "odp",
    "ods",
    "odt",
    "pdf",
    "pptx",
    "xlsx",
    "zip_bomb_docx",
]


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf(pages: list[str]) -> bytes:
    """A PDF with one page per string (ASCII text in Helvetica, one line per line of the string),
    with a correct cross-reference table."""
    objects: list[str] = []
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects.append("<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, text in enumerate(pages):
        lines = " T* ".join(f"{_pdf_string(line)} Tj" for line in text.split("\n"))
        stream = f"BT /F1 11 Tf 14 TL 50 780 Td {lines} ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream.encode('latin-1'))} >>\nstream\n{stream}\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def looping_pdf() -> bytes:
    """A PDF whose page tree holds itself as a kid and whose xref's /Prev points at itself."""
    body = pdf(["loop"])
    body = body.replace(b"/Kids [4 0 R]", b"/Kids [2 0 R 4 0 R]")
    start = body.rindex(b"startxref\n") + len(b"startxref\n")
    xref = body[start:].split(b"\n")[0].decode()
    return body.replace(b"/Root 1 0 R >>", f"/Root 1 0 R /Prev {xref} >>".encode())


def _zip(parts: dict[str, str | bytes], *, stored_first: str | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if stored_first is not None:  # ODF: the mimetype first, uncompressed
            archive.writestr(zipfile.ZipInfo("mimetype"), stored_first, compress_type=zipfile.ZIP_STORED)
        for name, data in parts.items():
            archive.writestr(name, data)
    return out.getvalue()


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006"
DOCX_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"


def _content_types(overrides: dict[str, str]) -> str:
    items = "".join(f'<Override PartName="/{p}" ContentType="{t}"/>' for p, t in overrides.items())
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{PKG}/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        f'<Default Extension="xml" ContentType="application/xml"/>{items}</Types>'
    )


def _rels(targets: dict[str, tuple[str, str]]) -> str:
    items = "".join(f'<Relationship Id="{i}" Type="{t}" Target="{p}"/>' for i, (t, p) in targets.items())
    head = f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{PKG}/relationships">'
    return f"{head}{items}</Relationships>"


def _docx_package(document: str | bytes) -> bytes:
    return _zip(
        {
            "[Content_Types].xml": _content_types({"word/document.xml": DOCX_MAIN}),
            "_rels/.rels": _rels({"rId1": (f"{RELS}/officeDocument", "word/document.xml")}),
            "word/document.xml": document,
        }
    )


def docx(paragraphs: list[str]) -> bytes:
    body = "".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(p)}</w:t></w:r></w:p>' for p in paragraphs)
    return _docx_package(
        f'<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{body}</w:body></w:document>'
    )


def xlsx(rows: list[list[str]]) -> bytes:
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    strings = [cell for row in rows for cell in row]
    sst = "".join(f"<si><t>{escape(s)}</t></si>" for s in strings)
    cells, n = [], 0
    for r, row in enumerate(rows, start=1):
        cs = ""
        for c, _ in enumerate(row):
            cs += f'<c r="{chr(65 + c)}{r}" t="s"><v>{n}</v></c>'
            n += 1
        cells.append(f'<row r="{r}">{cs}</row>')
    return _zip(
        {
            "[Content_Types].xml": _content_types(
                {
                    "xl/workbook.xml": "application/vnd.openxmlformats-officedocument."
                    "spreadsheetml.sheet.main+xml",
                    "xl/worksheets/sheet1.xml": "application/vnd.openxmlformats-officedocument."
                    "spreadsheetml.worksheet+xml",
                    "xl/sharedStrings.xml": "application/vnd.openxmlformats-officedocument."
                    "spreadsheetml.sharedStrings+xml",
                }
            ),
            "_rels/.rels": _rels({"rId1": (f"{RELS}/officeDocument", "xl/workbook.xml")}),
            "xl/workbook.xml": f'<workbook xmlns="{main}" xmlns:r="{RELS}"><sheets>'
            '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
            "xl/_rels/workbook.xml.rels": _rels(
                {
                    "rId1": (f"{RELS}/worksheet", "worksheets/sheet1.xml"),
                    "rId2": (f"{RELS}/sharedStrings", "sharedStrings.xml"),
                }
            ),
            "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{main}"><sheetData>'
            f"{''.join(cells)}</sheetData></worksheet>",
            "xl/sharedStrings.xml": f'<sst xmlns="{main}" count="{n}" uniqueCount="{n}">{sst}</sst>',
        }
    )


def pptx(slides: list[str]) -> bytes:
    """Slides' XML only (enough for a text walk; not a deck PowerPoint opens)."""
    a = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
    p = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
    parts: dict[str, str | bytes] = {}
    for i, text in enumerate(slides, start=1):
        parts[f"ppt/slides/slide{i}.xml"] = (
            f"<p:sld {a} {p}><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>{escape(text)}</a:t>"
            "</a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
        )
    return _zip(parts)


ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
)


def _odf(mime: str, body: str) -> bytes:
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS} office:version="1.2">'
        f"<office:body>{body}</office:body></office:document-content>"
    )
    manifest = (
        f'<?xml version="1.0" encoding="UTF-8"?><manifest:manifest {ODF_NS} manifest:version="1.2">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mime}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    return _zip({"content.xml": content, "META-INF/manifest.xml": manifest}, stored_first=mime)


def odt(paragraphs: list[str]) -> bytes:
    body = "".join(f"<text:p>{escape(p)}</text:p>" for p in paragraphs)
    return _odf("application/vnd.oasis.opendocument.text", f"<office:text>{body}</office:text>")


def ods(rows: list[list[str]]) -> bytes:
    cells = "".join(
        "<table:table-row>"
        + "".join(f"<table:table-cell><text:p>{escape(c)}</text:p></table:table-cell>" for c in row)
        + "</table:table-row>"
        for row in rows
    )
    body = f'<office:spreadsheet><table:table table:name="Sheet1">{cells}</table:table></office:spreadsheet>'
    return _odf("application/vnd.oasis.opendocument.spreadsheet", body)


def odp(slides: list[str]) -> bytes:
    pages = "".join(
        f'<draw:page draw:name="p{i}"><draw:frame><draw:text-box><text:p>{escape(s)}</text:p>'
        "</draw:text-box></draw:frame></draw:page>"
        for i, s in enumerate(slides)
    )
    return _odf(
        "application/vnd.oasis.opendocument.presentation",
        f"<office:presentation>{pages}</office:presentation>",
    )


def zip_bomb_docx(inflated: int = 256 * 1024 * 1024) -> bytes:
    """A DOCX whose document.xml inflates to `inflated` bytes (mostly blanks between elements)
    from about a thousandth of that."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
    ):
        archive.writestr("[Content_Types].xml", _content_types({"word/document.xml": DOCX_MAIN}))
        archive.writestr("_rels/.rels", _rels({"rId1": (f"{RELS}/officeDocument", "word/document.xml")}))
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(f"<w:document {W}><w:body>".encode())
            block = b" " * (1 << 20)
            for _ in range(inflated >> 20):
                member.write(block)
            member.write(b"<w:p><w:r><w:t>end</w:t></w:r></w:p></w:body></w:document>")
    return out.getvalue()


def entity_bomb_docx() -> bytes:
    """A DOCX whose document.xml declares the billion laughs."""
    entities = '<!ENTITY lol0 "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
    )
    document = (
        f'<?xml version="1.0"?><!DOCTYPE w:document [{entities}]>'
        f"<w:document {W}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
    )
    return _docx_package(document)


def deep_docx(depth: int = 100_000) -> bytes:
    """A DOCX whose document.xml nests `depth` elements."""
    document = f"<w:document {W}><w:body>" + "<w:p>" * depth + "</w:p>" * depth + "</w:body></w:document>"
    return _docx_package(document)


def miscounted_pdf() -> bytes:
    """Two pages whose page tree says three: a common off-by-one in real files."""
    return pdf(["first pelican", "second pelican"]).replace(b"/Count 2", b"/Count 3")


def bzip2_docx(paragraphs: list[str]) -> bytes:
    """A docx whose document part is compressed with bzip2, which no office program writes."""
    plain = docx(paragraphs)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(plain)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            kind = zipfile.ZIP_BZIP2 if info.filename == "word/document.xml" else zipfile.ZIP_DEFLATED
            target.writestr(info.filename, source.read(info.filename), compress_type=kind)
    return out.getvalue()
