"""Outcomes: what a step of a database script got, in one comparable text for both sides (sql_outcome, a
MariaDB or PostgreSQL step's; redis_outcome, a Redis reply's), what kind of statement a step is (a
SELECT, a write, an ALTER), and a table's final rows as text (table_text; a large one by its count and a
digest, big_table_text)."""

import decimal
import json
import re
import zlib


def norm_cell(v):
    if isinstance(v, (bytes, bytearray)):
        v = v.decode("utf-8", "replace")
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (decimal.Decimal, float)):  # MariaDB's SUM is a DECIMAL: whole ones compare as integers
        try:
            return int(v) if v == int(v) else str(v)
        except (ValueError, OverflowError, decimal.InvalidOperation):  # NaN, infinity
            return str(v)
    if v is None:
        return None
    if not isinstance(v, (int, str)):
        return str(v)
    return v


def sql_outcome(kind, error=None, rows=None, affected=0, insert_id=0, warnings=0, waited=False, ignore_ids=False,
                sql="", message="", unordered=False):
    """kind: 'rows' (a SELECT), 'write', 'ok', 'error', 'not issued', 'still waiting'. An ALTER's error
    carries its message too: which duplicated value a failed unique build names is part of its outcome.
    unordered: the rows come in no defined order (PostgreSQL's without ORDER BY) and are written sorted."""
    if kind in ("not issued", "still waiting"):
        text = kind
    elif error:
        text = f"error {error}"
        if is_alter(sql) and message:
            text += f" {message}"
    elif kind == "rows":
        cells = [[norm_cell(c) for c in r] for r in rows]
        if unordered:
            cells.sort(key=json.dumps)
        text = f"{len(cells)} rows " + json.dumps(cells)
    elif kind == "write":
        text = f"{affected} affected"
        if affected and insert_id and not ignore_ids:
            text += f", id {insert_id}"
        if warnings:
            text += f", {warnings} warnings"
    else:
        text = "ok"
    if waited and kind != "not issued":
        text += ", waited"
    return text


def is_select(sql):
    return re.match(r"\s*select\b", sql, re.I) is not None


def is_write(sql):
    return re.match(r"\s*(insert|replace|update|delete)\b", sql, re.I) is not None


def returns_rows(sql):
    """PostgreSQL's INSERT, UPDATE or DELETE ... RETURNING answers with rows, as a SELECT does."""
    return is_write(sql) and re.search(r"\breturning\b", sql, re.I) is not None


def unordered(sql):
    """A statement's rows without ORDER BY come in no defined order: PostgreSQL gives them in the heap's,
    where an updated row moves to the end, so a PostgreSQL script's compare sorted."""
    return re.search(r"\border\s+by\b", sql, re.I) is None


def is_alter(sql):
    """An online ALTER runs as long as its index build: its time is no lock wait on either side."""
    return re.match(r"\s*alter\b", sql, re.I) is not None


BIG_TABLE = 1000  # rows: a larger table compares by its count and a digest of its rows


def table_text(columns, rows, ignore_ids):
    keep = [i for i, c in enumerate(columns) if not (ignore_ids and c == "id")]
    if len(rows) > BIG_TABLE:
        return big_table_text(len(rows), sum(zlib.crc32(",".join(str(norm_cell(r[i])) for i in keep).encode())
                                             for r in rows))
    out = [[norm_cell(r[i]) for i in keep] for r in rows]
    if ignore_ids or "id" not in columns:  # a table keyed by other columns: its rows in one order on both sides
        out.sort(key=json.dumps)
    return f"{len(out)} rows " + json.dumps(out)


def big_table_text(count, checksum):
    """A table of more than BIG_TABLE rows (a legacy table) by its count and the sum of its rows' CRC32s
    (each row's cells joined by commas, as MariaDB's CONCAT_WS writes them): the server computes it
    itself, so its rows need not come back."""
    return f"{count} rows, checksum {checksum}"


def redis_outcome(reply):
    """A raw reply (redis-py's reply callbacks off) in the driver's form."""
    if isinstance(reply, Exception):
        return "error"
    if reply is None:
        return "nil"
    if isinstance(reply, int):
        return f"(integer) {reply}"
    if reply == "OK":  # a status reply; the scripts store no value "OK"
        return "OK"
    return json.dumps(reply)


def pttl_band(step, reply):
    """A PTTL's exact figure depends on the real clock: it compares by the band the script gives."""
    band = step.get("within_ms")
    if band and isinstance(reply, str) and reply.startswith("(integer) "):
        n = int(reply.split()[1])
        lo, hi = band
        return "(integer) " + (f"in [{lo}, {hi}]" if lo <= n <= hi else str(n))
    return reply
