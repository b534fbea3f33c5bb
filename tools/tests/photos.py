"""What a phone makes of a screen, for the decode tests (tools/tests/test_decode.py) and the
QR boot cases (tests/qemu/cases_qr.py): the screen scaled as a camera sees it, a keystone
(the phone not quite square to the screen: the top edge narrower by a share of the width
on each side), blur, light falling off across the picture, sensor noise, JPEG. Needs
python3-pil and numpy (the test set, scripts/setup-deps.sh).

DISTORTIONS are the ones `decode` is held to, each a (name, settings) pair.
"""
import io
import subprocess

# name, keystone (share of the width, each side), blur (px), light fall-off, noise, JPEG q
DISTORTIONS = (
    ("square on", 0.00, 1.0, 0.4, 4, 75),
    ("keystone 4 %", 0.04, 1.0, 0.4, 4, 75),
    ("keystone 8 %", 0.08, 1.0, 0.4, 4, 75),
    ("keystone 10 %", 0.10, 1.0, 0.4, 4, 75),
    ("keystone 10 %, blur 1.5 px, JPEG 60", 0.10, 1.5, 0.5, 6, 60),
)


def kernel_screen(payload, version, px, width=800, height=600, text_rows=3, cell_h=16):
    """A code as the kernel draws it (qrencode, level M, byte mode): black screen, white
    text rows on top (bars where text is), the code centred below with a 4-module quiet
    zone. Returns a PIL greyscale image."""
    from PIL import Image, ImageDraw
    import tempfile
    import os
    with tempfile.TemporaryDirectory() as tmp:
        src, png = os.path.join(tmp, "p.bin"), os.path.join(tmp, "q.png")
        with open(src, "wb") as f:
            f.write(payload)
        subprocess.run(["qrencode", "-8", "-l", "M", "-v", str(version), "-s", "1", "-m",
                        "0", "-r", src, "-o", png], check=True)
        q = Image.open(png).convert("L")
        q.load()
    n = q.size[0]
    side = (n + 8) * px
    img = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(img)
    for row in range(text_rows - 1):   # text: thin light strokes, as glyphs are
        for x in range(0, width // 2, 8):
            draw.rectangle([x + 1, row * cell_h + 3, x + 5, row * cell_h + 12], fill=190)
    code = Image.new("L", (side, side), 255)
    code.paste(q.resize((n * px, n * px), Image.NEAREST), (4 * px, 4 * px))
    top = text_rows * cell_h
    img.paste(code, ((width - side) // 2, top + (height - top - side) // 2))
    return img


def phone_photo(img, keystone, blur=1.0, light=0.4, noise=4, quality=75, scale=2.0, seed=0):
    """The screen image as a phone photographs it: JPEG bytes."""
    import numpy
    from PIL import Image, ImageFilter
    w, h = img.size
    img = img.resize((int(w * scale), int(h * scale)), Image.BILINEAR)
    W, H = img.size
    k = keystone * W
    src = [(0, 0), (W, 0), (W, H), (0, H)]
    dst = [(k, 0), (W - k, 0), (W, H), (0, H)]
    a, b = [], []
    for (x, y), (u, v) in zip(dst, src):   # output -> input, as PIL's PERSPECTIVE wants
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        b.append(u)
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        b.append(v)
    coeffs = numpy.linalg.solve(numpy.array(a, float), numpy.array(b, float))
    img = img.transform((W, H), Image.PERSPECTIVE, tuple(coeffs), Image.BILINEAR,
                        fillcolor=30)
    if blur:
        img = img.filter(ImageFilter.GaussianBlur(blur))
    fall = numpy.linspace(1 - light, 1, W)[None, :]          # light from the right
    arr = numpy.asarray(img, float) * fall + 20
    arr += numpy.random.default_rng(seed).normal(0, noise, arr.shape)
    out = Image.fromarray(numpy.clip(arr, 0, 255).astype("uint8"))
    buf = io.BytesIO()
    out.save(buf, "JPEG", quality=quality)
    return buf.getvalue()
