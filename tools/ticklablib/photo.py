"""What a phone makes of the last screen's QR codes, made readable again: the code found as
the bright quadrilateral it is on the dark screen (its light quiet zone), that
quadrilateral straightened by a perspective transform into a square, and the square given
to zbar, which reads the bytes.

Why this way: zbar reads a code square to the camera but fits only an affine grid, so a
large code photographed a few degrees off square (a keystone of 4 % of the width) defeats
it. OpenCV's WeChat detector reads such photos, but its Python binding returns text only:
a code's bytes that are not UTF-8 (ticklab's parts are zlib data) raise an exception and a
NUL ends the string, so the bytes cannot be had from it. OpenCV's image functions find and
straighten the code; zbar reads the straight code's bytes exactly (-Sbinary).

Needs Debian's python3-opencv (scripts/setup-deps.sh); without it `available()` is false
and decode reads what zbar reads alone (screenshots, photos taken square on).
"""

import os

ZONE_MODULES = 4       # the quiet zone the kernel draws around a code, in modules
SIDE_PX = 1000         # the straightened square, quiet zone included: 5 px a module at
                       # version 40, more below
MIN_AREA = 0.01        # a candidate covers at least this share of the photo
CANDIDATES = 4         # quadrilaterals tried per photo, largest first


def available():
    try:
        import cv2  # noqa: F401  (Debian's python3-opencv)
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def _order(pts):
    """Four corners as top-left, top-right, bottom-right, bottom-left."""
    import numpy
    s = pts.sum(1)
    d = numpy.diff(pts, axis=1).ravel()
    return numpy.float32([pts[numpy.argmin(s)], pts[numpy.argmin(d)], pts[numpy.argmax(s)],
                          pts[numpy.argmax(d)]])


def quadrilaterals(gray):
    """The bright convex quadrilaterals of a greyscale photo, largest first: each a code's
    light square (the quiet zone closes it; the dark modules inside are closed over)."""
    import cv2
    import numpy
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    found = []
    masks = [cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]]
    # uneven light: a threshold that follows the light across the photo
    block = max(31, (min(gray.shape) // 8) | 1)
    masks.append(cv2.adaptiveThreshold(blur, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                       cv2.THRESH_BINARY, block, -5))
    k = max(3, (min(gray.shape) // 80) | 1)
    kernel = numpy.ones((k, k), numpy.uint8)
    for mask in masks:
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for c in sorted(contours, key=cv2.contourArea, reverse=True)[:CANDIDATES]:
            if cv2.contourArea(c) < MIN_AREA * gray.size:
                break
            hull = cv2.convexHull(c)
            quad = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True)
            if len(quad) != 4:
                continue
            quad = _order(quad.reshape(4, 2).astype(numpy.float32))
            sides = [float(numpy.hypot(*(quad[i] - quad[(i + 1) % 4]))) for i in range(4)]
            if max(sides) > 2 * min(sides):
                continue   # no square seen at an angle: a row of text, a bezel
            if any(float(numpy.abs(quad - q).max()) < 0.02 * max(sides) for q in found):
                continue   # the same square found by the other threshold
            found.append(quad)
    return found


def straightened(path, folder, binarize=False):
    """The code-like quadrilaterals of the image at `path`, each straightened into a square
    PNG in `folder` (`binarize`: thresholded, for a second try); returns their paths (none
    when the image is not read or has none)."""
    import cv2
    import numpy
    gray = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if gray is None:
        return []
    # a photo from a phone is often 4000 px wide: the search needs far fewer
    scale = min(1.0, 1600.0 / max(gray.shape))
    small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale < 1.0 else gray
    out = []
    dst = numpy.float32([[0, 0], [SIDE_PX, 0], [SIDE_PX, SIDE_PX], [0, SIDE_PX]])
    base = os.path.join(folder, os.path.basename(path))
    for i, quad in enumerate(quadrilaterals(small)[:CANDIDATES]):
        m = cv2.getPerspectiveTransform(quad / scale, dst)
        square = cv2.warpPerspective(gray, m, (SIDE_PX, SIDE_PX), flags=cv2.INTER_CUBIC,
                                     borderValue=255)
        # a light margin outside the quiet zone: zbar finds the finder patterns better
        square = cv2.copyMakeBorder(square, 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255)
        if binarize:
            square = cv2.threshold(square, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
        name = "%s.%d.%s.png" % (base, i, "otsu" if binarize else "plain")
        cv2.imwrite(name, square)
        out.append(name)
    return out
