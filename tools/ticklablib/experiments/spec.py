"""What the host knows about one experiment, as one object: each experiment's module fills
one `Experiment` and the registry (experiments/__init__.py) lists them in the kernel's
order. The rest of the tool reads these fields and calls these hooks; it never names an
experiment.

A figure's `draw(data, options)` returns [plots.Drawn] or raises figdata.Absent. Figure
functions import the drawing modules when they run, so that `check` and `capture` (which
read the registry for names and row keys) work without python3-matplotlib.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Figure:
    """One figure of the report: its file key, its title, the function that draws it."""
    key: str
    title: str
    draw: object


@dataclass
class Experiment:
    """One experiment the kernel may run.

    name, title, about  its `exp` name, a title, what it measures in one line
    row_keys     the keys that name one row of its table (two runs are compared row by
                 row on these)
    columns      the keys of its compact table, in order (tables.plain)
    grid         rows -> tables.Table: a table folded into a grid, instead of columns
    no_table     its rows are shown as the summary's latency table, not a table of its own
    cell         (row, key) -> text or None: a cell shown otherwise than as its number
    figures      [Figure] in the report's order
    reads        the other result-row keys its figures and checks read (the schema test
                 checks them, with row_keys and columns, against the kernel's file)
    published    published.Published entries: the sources' figures set beside its rows
    references   [(text, where from)]: figures measured for scale, not publications
    typical_s    {profile: machine seconds it took}: capture's estimate of the time left
    typical_icount_wall_s  {profile: wall seconds it took under icount, exact mode}
    never_negative  keys whose negative value is an impossible figure, of the kind
                 `never_negative_kind` (summary.IMPOSSIBLE_KINDS: "latency" or "cost")
    impossible   (data, rows, names) -> [text]: other figures its rows cannot hold, of the
                 kind `impossible_kind` (the report lists them kind by kind)
    latency_series  its rows are latency series (device, path, wait, percentiles and a
                 histogram), it sends their raw samples, and they head the report
    paths, waits {value: words}: what its `path` and `wait` values mean
    verdict_topics  {topic: words}: the verdict records' topics it answers, in words
    """
    name: str
    title: str
    row_keys: tuple
    about: str
    columns: tuple = ()
    grid: object = None
    no_table: bool = False
    cell: object = None
    figures: tuple = ()
    reads: tuple = ()
    published: tuple = ()
    references: tuple = ()
    typical_s: dict = field(default_factory=dict)
    typical_icount_wall_s: dict = field(default_factory=dict)
    never_negative: tuple = ()
    never_negative_kind: str = "cost"
    impossible: object = None
    impossible_kind: str = ""
    latency_series: bool = False
    paths: dict = field(default_factory=dict)
    waits: dict = field(default_factory=dict)
    verdict_topics: dict = field(default_factory=dict)

    def keys_read(self):
        """Every result-row key the host reads or shows for this experiment."""
        keys = list(self.row_keys) + list(self.columns) + list(self.reads) + \
            list(self.never_negative)
        for entry in self.published:
            keys += [k for k, _ in entry.match] + [entry.key]
        return tuple(dict.fromkeys(keys))
