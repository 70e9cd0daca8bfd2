"""Cells and tables for the report: one value per (tool, row), aligned columns."""



def dig(result, *keys):
    for key in keys:
        if not isinstance(result, dict) or result.get(key) is None:
            return None
        result = result[key]
    return result


def peak_memory(result, key):
    values = [dig(group, "memory", key) for group in (result or {}).values() if isinstance(group, dict)]
    values = [v for v in values if v is not None]
    return max(values) if values else None


def cell(result, row):
    """The text for one (tool, row) cell."""
    if result is None:
        return "—"
    if "status" in result:
        return result["status"]
    value = row(result)
    return "—" if value is None else value


def fmt(value, digits=0, unit=""):
    return None if value is None else f"{value:,.{digits}f}{unit}"


def seq_value(key, digits):
    def row(r):
        seq = r.get("sequential") or {}
        if "error" in seq:
            return "error"
        text = fmt(seq.get(key), digits)
        if text and not seq.get("complete", True):
            text += f" (partial, {seq['pages_read']} p)"
        return text
    return row


def pair(group, a, b, *path):
    def row(r):
        g = dig(r, group, *path)
        if g is None:
            return "error" if "error" in (r.get(group) or {}) else None
        return f"{fmt(g.get(a), 1)} / {fmt(g.get(b), 1)}"
    return row


def workers_rss(r):
    """The inkyfs workers' peak RSS cell: the sampled sum, then the largest one (none for a peer)."""
    if not peak_memory(r, "workers"):
        return None
    return f"{fmt(peak_memory(r, 'workers_peak_sum_mib'), 1)} / {fmt(peak_memory(r, 'worker_max_hwm_mib'), 1)}"


def print_table(title, header, rows):
    widths = [max(len(str(line[i])) for line in [header, *rows]) for i in range(len(header))]
    print(title)
    for k, line in enumerate([header, *rows]):
        print("  " + "  ".join(str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i])
                               for i, c in enumerate(line)))
        if k == 0:
            print("  " + "  ".join("-" * w for w in widths))
