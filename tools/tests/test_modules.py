"""The host tool's modules: no import circle (plots.py <-> plots_exp.py /
plots_latency.py, hidden by an import inside a function), and `check` and `capture` run on
a machine without python3-matplotlib (exports.py imported it at module level)."""
import ast
import os
import subprocess
import sys

from streams import run_bytes

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(TOOLS, "ticklablib")
TICKLAB = os.path.join(TOOLS, "ticklab")


PACKAGES = ("experiments", "db")  # ticklablib's subpackages: their modules are "pkg.module"


def imports_of(path, package=""):
    """The ticklablib modules a module of `package` ("" or a subpackage) may import, at its
    top or inside any function, named as graph() names them ("pkg.module" in a
    subpackage); names that are not modules are filtered out by graph()."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = package if node.level == 1 else ""
        full = ".".join(p for p in (base, node.module or "") if p)
        if node.module:
            out.add(full)
        out.update(".".join(p for p in (full, a.name) if p) for a in node.names)
    return out


def module_files():
    """{module name: path} of every ticklablib module, subpackages included."""
    out = {f[:-3]: os.path.join(LIB, f) for f in os.listdir(LIB) if f.endswith(".py")}
    for pkg in PACKAGES:
        for f in os.listdir(os.path.join(LIB, pkg)):
            if f.endswith(".py"):
                name = pkg if f == "__init__.py" else "%s.%s" % (pkg, f[:-3])
                out[name] = os.path.join(LIB, pkg, f)
    return out


def graph():
    files = module_files()
    return {m: imports_of(path, m.split(".")[0] if m.split(".")[0] in PACKAGES else "")
            & set(files) for m, path in files.items()}


def cycle_in(g):
    """One import circle as a list of modules, or None."""
    state = {}

    def visit(m, path):
        state[m] = "open"
        for n in sorted(g[m]):
            if state.get(n) == "open":
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n, path + [n])
                if found:
                    return found
        state[m] = "done"
        return None

    for m in sorted(g):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def test_no_import_circle():
    assert cycle_in(graph()) is None, " -> ".join(cycle_in(graph()))


def test_the_circle_finder_finds_one():
    g = graph()
    g["plots"] = g["plots"] | {"figures"}  # what plots.py:227 did, as figures() there
    assert cycle_in(g) is not None


BLOCK = ("import runpy, sys\n"
         "class Block:\n"
         "    def find_spec(self, name, path=None, target=None):\n"
         "        if name == 'matplotlib' or name.startswith('matplotlib.'):\n"
         "            raise ImportError('blocked for the test: ' + name)\n"
         "sys.meta_path.insert(0, Block())\n"
         "sys.argv = sys.argv[1:]\n"
         "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def without_matplotlib(*args):
    p = subprocess.run([sys.executable, "-c", BLOCK, TICKLAB] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def test_check_and_capture_run_without_matplotlib(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(run_bytes())
    code, out, err = without_matplotlib("check", "--help")
    assert code == 0 and "exit status" in out, err
    code, out, err = without_matplotlib("check", log)
    assert code == 0 and "run.log: ok (1 run(s), 0 not whole, 0 failed)" in out, err
    code, out, err = without_matplotlib("capture", "--help")
    assert code == 0 and "--serial DEVICE" in out, err
    code, out, err = without_matplotlib("compare", log, log)
    assert code == 0 and "compare: 2 run(s)" in out, err


def test_report_without_matplotlib_writes_everything_but_the_figures(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(run_bytes())
    code, out, err = without_matplotlib("report", log, "-o", tmp_path / "rep")
    assert code == 0, err
    assert "not drawn: figures" in out
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "python3-matplotlib is not installed" in page
    assert (tmp_path / "rep" / "data" / "records.jsonl").exists()


def test_the_block_works():
    """The same subprocess, asked to import matplotlib, cannot."""
    code = subprocess.run([sys.executable, "-c", BLOCK.replace(
        "runpy.run_path(sys.argv[0], run_name='__main__')", "import matplotlib")],
        capture_output=True, text=True)
    assert code.returncode != 0 and "blocked for the test: matplotlib" in code.stderr
