"""The report as a list of blocks, rendered twice: ``report.md`` (figures linked) and ``report.html`` (one
self-contained page: figures embedded as base64 PNG, so it opens anywhere, including as an MLflow artifact).

Table cells may use ``**bold**`` and ```code```; everything else is plain text (escaped in HTML).
"""
from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

BOLD = re.compile(r"\*\*(.+?)\*\*")
CODE = re.compile(r"`([^`]+)`")  # a run id in a Markdown code span
STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}figure{margin:1em 0}img{max-width:100%}figcaption,.caption{color:#555;font-size:.92em}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}.warning{color:#a15c00}"""


@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Text:
    text: str
    kind: str = "p"           # "p" | "caption" | "warning" | "pre"


@dataclass
class Table:
    frame: pd.DataFrame       # string cells


@dataclass
class Figure:
    path: Path                # a PNG
    caption: str


Block = Heading | Text | Table | Figure


def _md_cell(v: object) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block], title: str) -> str:
    """Markdown with figures linked by file name (they sit beside report.md)."""
    out = [f"# {title}", ""]
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + b.text, ""]
        elif isinstance(b, Text):
            if b.kind == "pre":
                out += ["```", b.text, "```", ""]
            elif b.kind == "caption":
                out += ["*" + b.text.replace("*", "\\*") + "*", ""]  # f* must not close the italics
            else:
                out += [b.text, ""]
        elif isinstance(b, Table):
            cols = [str(c) for c in b.frame.columns]
            out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
            out += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in b.frame.itertuples(index=False)]
            out.append("")
        elif isinstance(b, Figure):
            out += [f"![{b.path.stem}]({b.path.name})", "", "*" + b.caption.replace("*", "\\*") + "*", ""]
    return "\n".join(out)


def _html_cell(v: object) -> str:
    return CODE.sub(r"<code>\1</code>", BOLD.sub(r"<b>\1</b>", html.escape(str(v))))


def to_html(blocks: list[Block], title: str) -> str:
    """One self-contained HTML page; every figure is an ``<img>`` with a base64 PNG data URI."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>"]
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{html.escape(b.text)}</h{b.level}>")
        elif isinstance(b, Text):
            if b.kind == "pre":
                out.append(f"<pre>{html.escape(b.text)}</pre>")
            else:
                out.append(f'<p class="{b.kind}">{_html_cell(b.text)}</p>')
        elif isinstance(b, Table):
            head = "".join(f"<th>{html.escape(str(c))}</th>" for c in b.frame.columns)
            body = "".join("<tr>" + "".join(f"<td>{_html_cell(v)}</td>" for v in row) + "</tr>"
                           for row in b.frame.itertuples(index=False))
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(b, Figure):
            data = base64.b64encode(b.path.read_bytes()).decode("ascii")
            out.append(f'<figure><img alt="{html.escape(b.path.stem)}" src="data:image/png;base64,{data}">'
                       f"<figcaption>{html.escape(b.caption)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out)
