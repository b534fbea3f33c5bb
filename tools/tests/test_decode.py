"""`ticklab decode`: QR parts (docs/report-format.md, "QR parts") made here with Debian's
qrencode (an encoder independent of the kernel's), read back through zbar: whole runs in any
order, missing parts named, duplicates tolerated, two runs told apart, damaged codes named."""
import os
import shutil
import struct
import subprocess
import zlib

import pytest

from streams import run_bytes
from tooling import run_tool

pytestmark = pytest.mark.skipif(not (shutil.which("qrencode") and shutil.which("zbarimg")),
                                reason="qrencode and zbarimg needed (make deps-test)")


def make_parts(records, n, run_id=0x1234ABCD, flags=0, corrupt=None):
    """The payloads of n parts, as the kernel frames them."""
    stream = zlib.compress(records, 9)
    chunk = -(-len(stream) // n)
    crc = zlib.crc32(records)
    out = []
    for k in range(1, n + 1):
        off = (k - 1) * chunk
        body = struct.pack("<2sBBIHHIII", b"TQ", 1, flags, run_id, k, n, off, len(stream),
                           crc) + stream[off:off + chunk]
        body += struct.pack("<I", zlib.crc32(body))
        if corrupt == k:                       # a bit flipped after the CRC was made
            body = body[:30] + bytes([body[30] ^ 0x01]) + body[31:]
        out.append(body)
    return out


def to_png(payload, path):
    src = path + ".bin"
    with open(src, "wb") as f:
        f.write(payload)
    subprocess.run(["qrencode", "-8", "-l", "M", "-s", "3", "-r", src, "-o", path], check=True)
    os.remove(src)
    return path


@pytest.fixture
def records():
    return run_bytes(samples=40)


def images(tmp_path, parts, prefix="p"):
    return [to_png(p, str(tmp_path / ("%s%d.png" % (prefix, i)))) for i, p in enumerate(parts)]


def test_whole_run_in_any_order_round_trips_and_checks(tmp_path, records):
    files = images(tmp_path, make_parts(records, 4))
    out = tmp_path / "run.log"
    code, stdout, err = run_tool("decode", *reversed(files), "-o", out)
    assert code == 0, err
    assert out.read_bytes() == records
    assert "4 parts" in stdout
    code, stdout, _ = run_tool("check", out)
    assert code == 0, stdout


def test_missing_part_is_named(tmp_path, records):
    files = images(tmp_path, make_parts(records, 5))
    code, _, err = run_tool("decode", *(files[:2] + files[3:]), "-o", tmp_path / "x.log")
    assert code == 1
    assert "part 3 of 5 missing" in err
    assert not (tmp_path / "x.log").exists()


def test_duplicates_do_no_harm(tmp_path, records):
    files = images(tmp_path, make_parts(records, 3))
    code, _, err = run_tool("decode", *(files + files[1:2] + files[:1]), "-o", tmp_path / "d.log")
    assert code == 0, err
    assert (tmp_path / "d.log").read_bytes() == records


def test_two_runs_are_never_mixed(tmp_path, records):
    other = run_bytes(samples=5)
    a = images(tmp_path, make_parts(records, 2, run_id=0xAAAA0001), "a")
    b = images(tmp_path, make_parts(other, 2, run_id=0xBBBB0002), "b")
    code, _, err = run_tool("decode", *(a + b), "-o", tmp_path / "m.log")
    assert code == 1
    assert "2 runs" in err and "aaaa0001" in err and "bbbb0002" in err
    code, _, err = run_tool("decode", *(a + b), "--run", "bbbb0002", "-o", tmp_path / "b.log")
    assert code == 0, err
    assert (tmp_path / "b.log").read_bytes() == other


def test_damaged_part_is_named_and_left_out(tmp_path, records):
    files = images(tmp_path, make_parts(records, 3, corrupt=2))
    code, _, err = run_tool("decode", *files, "-o", tmp_path / "c.log")
    assert code == 1
    assert "part 2 of 3 is damaged" in err and "part 2 of 3 missing" in err
    # the same part from a good photo (the next round on the screen) completes it
    good = images(tmp_path, make_parts(records, 3)[1:2], "g")
    code, _, err = run_tool("decode", *(files + good), "-o", tmp_path / "c.log")
    assert code == 0, err


def test_image_without_code_and_missing_file(tmp_path, records):
    blank = tmp_path / "blank.pgm"
    blank.write_bytes(b"P5\n64 64\n255\n" + b"\xff" * 64 * 64)
    code, _, err = run_tool("decode", blank, "-o", tmp_path / "n.log")
    assert code == 1 and "no ticklab QR code found" in err
    code, _, err = run_tool("decode", tmp_path / "nope.png", "-o", tmp_path / "n.log")
    assert code == 3 and "no such file" in err


def test_store_overflow_flag_is_reported(tmp_path, records):
    files = images(tmp_path, make_parts(records, 2, flags=1))
    code, _, err = run_tool("decode", *files, "-o", tmp_path / "o.log")
    assert code == 1 and "store was full" in err
    assert (tmp_path / "o.log").read_bytes() == records


def test_existing_output_needs_force(tmp_path, records):
    files = images(tmp_path, make_parts(records, 1))
    out = tmp_path / "e.log"
    out.write_bytes(b"keep")
    code, _, err = run_tool("decode", *files, "-o", out)
    assert code == 3 and out.read_bytes() == b"keep"
    code, _, err = run_tool("decode", *files, "-o", out, "--force")
    assert code == 0 and out.read_bytes() == records


# --- what a phone takes: perspective, blur, uneven light, JPEG ----------------------------

PHOTO_VERSION, PHOTO_PX, PART_BYTES = 25, 5, 900   # a code as the kernel draws it at 1024x768


def photo_parts(tmp_path):
    """The records' parts, each photographed at every distortion: {name: [paths]}."""
    from photos import DISTORTIONS, kernel_screen, phone_photo
    records = run_bytes(samples=150)
    n = -(-len(zlib.compress(records, 9)) // (PART_BYTES - 28))
    parts = make_parts(records, n)
    shots = {}
    for name, ks, blur, light, noise, q in DISTORTIONS:
        shots[name] = []
        for k, payload in enumerate(parts, 1):
            screen = kernel_screen(payload, PHOTO_VERSION, PHOTO_PX, 1024, 768)
            path = tmp_path / ("%s-%d.jpg" % (name.replace(" ", "_").replace("%", "pct")
                                               .replace(",", ""), k))
            path.write_bytes(phone_photo(screen, ks, blur, light, noise, q, seed=k))
            shots[name].append(str(path))
    return records, shots


def parts_read(paths, tmp_path):
    from ticklablib import decode
    return sum(bool(decode.read_parts(p, str(tmp_path))[0]) for p in paths)


@pytest.mark.skipif(not __import__("ticklablib.photo", fromlist=["x"]).available(),
                    reason="python3-opencv is not installed (make deps)")
def test_phone_photos_with_perspective_blur_uneven_light_and_jpeg_are_read(tmp_path):
    """Every part read from photos up to a 10 % keystone (the rate per distortion is
    printed), and the photos of the harshest distortion decode to the records."""
    records, shots = photo_parts(tmp_path)
    for name, paths in shots.items():
        got = parts_read(paths, tmp_path)
        print("decode, %s: %d of %d parts read" % (name, got, len(paths)))
        assert got >= 0.95 * len(paths), (name, got, len(paths))
    worst = list(shots.values())[-1]
    code, _, err = run_tool("decode", *worst, "-o", tmp_path / "ph.log")
    assert code == 0, err
    assert (tmp_path / "ph.log").read_bytes() == records


def test_zbar_alone_misses_a_keystoned_photo(tmp_path):
    """Why decode straightens a photo: zbar fits an affine grid, and a 4 % keystone
    defeats it on a code this size (it reads the same code photographed square on)."""
    from photos import kernel_screen, phone_photo
    from ticklablib import decode
    payload = make_parts(run_bytes(samples=300), 8)[0]
    screen = kernel_screen(payload, PHOTO_VERSION, PHOTO_PX, 1024, 768)
    for ks, readable in ((0.0, True), (0.08, False)):
        path = tmp_path / ("z%d.jpg" % (ks * 100))
        path.write_bytes(phone_photo(screen, ks, seed=1))
        raw, why = decode.read_image(str(path))
        assert why is None
        assert bool(decode.parse_parts(raw, str(path), [])) is readable, ks
