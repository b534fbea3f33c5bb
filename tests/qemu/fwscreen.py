"""The firmware's text screen as its serial console shows it, for boot tests that must answer
firmware menus (tests/qemu/cases_secureboot.py: shim's MokManager).

OVMF copies its text console to COM1 as a PC-ANSI terminal: cursor positioning (ESC [ r ; c H),
colours (ESC [ n m), clearing (ESC [ 2 J), line drawing in code page 437, and reads keys from
the same port (ESC [ A/B for the arrows, CR for Enter). Screen keeps a character grid with each
cell's background colour, so that a test can wait for a screen by its words and find the
highlighted line of a menu (drawn on another background), instead of sleeping a fixed time.
SerialConsole is the live link: a QEMU chardev socket read by a thread that keeps every byte
(the log the record checks read) and feeds the screen.
"""
import re
import socket
import threading
import time

ROWS, COLS = 60, 200           # larger than any text mode OVMF sets (100x31 at 800x600)
DOWN, UP, ENTER = b"\x1b[B", b"\x1b[A", b"\r"
REDRAW_S = 10.0                # no readable highlight for this long: ask for a redraw

# A box's vertical sides: code page 437's lines (0xB3, 0xBA), or '|' when the firmware's
# console refused a line-drawing character (MokManager then draws its boxes in ASCII; seen
# under load on OVMF).
FRAME = "\u2502\u2551|"
CORNERS = "\u250c\u2514\u2554\u255a+"   # top-left and bottom-left corners, or ASCII '+'
_SEQ = re.compile(rb"\x1b\[([0-9;=?]*)([A-Za-z])")
_PARTIAL = re.compile(rb"\x1b(\[[0-9;=?]*)?")


class Screen:
    def __init__(self):
        self.chars = [[" "] * COLS for _ in range(ROWS)]
        self.bg = [[0] * COLS for _ in range(ROWS)]
        self.row = self.col = 0
        self.cur_bg = 0
        self.pending = b""
        self.version = 0          # bumped on every change: waiters look for a new state

    def _put(self, ch):
        if self.row < ROWS and self.col < COLS:
            self.chars[self.row][self.col] = ch
            self.bg[self.row][self.col] = self.cur_bg
        self.col += 1

    def _clear(self):
        for r in range(ROWS):
            self.chars[r] = [" "] * COLS
            self.bg[r] = [self.cur_bg] * COLS

    def _sgr(self, params):
        for p in (params.split(";") if params else ["0"]):
            n = int(p) if p.isdigit() else 0
            if n == 0:
                self.cur_bg = 0
            elif 40 <= n <= 47:
                self.cur_bg = n - 40

    def feed(self, data):
        data = self.pending + data
        self.pending = b""
        i = 0
        while i < len(data):
            b = data[i]
            if b == 0x1b:
                m = _SEQ.match(data, i)
                if not m:
                    if len(data) - i < 16 and _PARTIAL.fullmatch(data, i):
                        self.pending = data[i:]     # a sequence cut by the read: keep it
                        break
                    # A damaged sequence (bytes lost on the way, which OVMF's console does
                    # under load): dropped whole, so that its parameters do not show as text.
                    d = _PARTIAL.match(data, i)
                    i = d.end() if d and d.end() > i + 1 else i + 1
                    continue
                params, cmd = m.group(1).decode(), m.group(2).decode()
                if cmd == "H" or cmd == "f":
                    nums = [int(x) if x.isdigit() else 1 for x in params.split(";")] if params else [1, 1]
                    nums += [1] * (2 - len(nums))
                    self.row, self.col = max(nums[0] - 1, 0), max(nums[1] - 1, 0)
                elif cmd == "m":
                    self._sgr(params)
                elif cmd == "J" and params in ("2", ""):
                    self._clear()
                elif cmd == "K" and self.row < ROWS:
                    for c in range(self.col, COLS):
                        self.chars[self.row][c] = " "
                        self.bg[self.row][c] = self.cur_bg
                i = m.end()
                continue
            if b == 0x0d:
                self.col = 0
            elif b == 0x0a:
                self.row += 1
                if self.row >= ROWS:
                    del self.chars[0], self.bg[0]
                    self.chars.append([" "] * COLS)
                    self.bg.append([0] * COLS)
                    self.row = ROWS - 1
            elif b == 0x08:
                self.col = max(self.col - 1, 0)
            elif b >= 0x20:
                self._put(bytes([b]).decode("cp437"))
            i += 1
        self.version += 1

    def lines(self):
        return ["".join(r).rstrip() for r in self.chars]

    def text(self):
        return "\n".join(l for l in self.lines() if l.strip())

    def highlighted(self):
        """The words of the menu line drawn on another background than its own box's
        border (MokManager: the chosen line black, the box blue), from frame to frame, or
        None. The border is the corner above (or below) the line's left frame: a menu box is
        redrawn whole on every key, so this holds even when lost bytes left the screen
        around the box half drawn. Text outside a frame (firmware messages) is never a menu
        line; two candidate lines (a lost colour change) give None rather than a guess."""
        found = []
        for r in range(ROWS):
            row, bgs = self.chars[r], self.bg[r]
            frames = [c for c in range(COLS) if row[c] in FRAME]
            # each stretch between two neighbouring frames is a candidate line (a damaged
            # draw can leave pieces of another box on the same row)
            for left, right in zip(frames, frames[1:]):
                words = [c for c in range(left + 1, right) if row[c].isalnum()]
                if not words:
                    continue
                inner = {bgs[c] for c in words}
                if len(inner) != 1:
                    continue
                mine = inner.pop()
                border = self._corner_bg(r, left)
                if bgs[left] == mine and bgs[right] == mine and border is not None \
                        and border != mine:
                    found.append("".join(row[left + 1:right]).strip())
        return found[0] if len(found) == 1 else None

    def _corner_bg(self, r, c):
        """The background of the box corner above row r at column c (over the vertical
        frame), or else below it; None when neither is there."""
        for step in (-1, 1):
            y = r + step
            while 0 <= y < ROWS and self.chars[y][c] in FRAME:
                y += step
            if 0 <= y < ROWS and self.chars[y][c] in CORNERS:
                return self.bg[y][c]
        return None


class UiTimeout(Exception):
    pass


class SerialConsole:
    """QEMU's COM1 on a Unix socket (-chardev socket,...,server=on,wait=on): connect() lets
    the guest start. Every byte goes to log_path as it comes; the screen follows."""

    def __init__(self, sock_path, log_path):
        self.sock_path, self.log_path = sock_path, log_path
        self.screen = Screen()
        self.data = bytearray()
        self.lock = threading.Condition()
        self.closed = False
        self.sock = None

    def connect(self, timeout_s, alive):
        t0 = time.monotonic()
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.sock_path)
                break
            except OSError:
                s.close()
                if time.monotonic() - t0 > timeout_s or not alive():
                    raise UiTimeout("QEMU's serial socket %s did not open" % self.sock_path)
                time.sleep(0.05)
        self.sock = s
        self.log = open(self.log_path, "wb")
        self.reader = threading.Thread(target=self._reader, daemon=True)
        self.reader.start()

    def _reader(self):
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            with self.lock:
                if not chunk:
                    self.closed = True
                    self.log.close()
                    self.lock.notify_all()
                    return
                self.data += chunk
                self.log.write(chunk)
                self.log.flush()
                self.screen.feed(chunk)
                self.lock.notify_all()

    def send(self, keys):
        self.sock.sendall(keys)

    def wait(self, what, pred, timeout_s):
        """Waits until pred(screen, data) is true; raises UiTimeout naming `what` and
        showing the screen if it is not within timeout_s or the guest went away."""
        deadline = time.monotonic() + timeout_s
        with self.lock:
            while True:
                r = pred(self.screen, bytes(self.data))
                if r:
                    return r
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise UiTimeout("%s: %s; the screen was:\n%s" % (
                        what, "QEMU closed the serial port" if self.closed else
                        "not within %d s" % timeout_s, self.screen.text()[-2500:]))
                self.lock.wait(min(left, 0.5))

    def wait_text(self, text, timeout_s):
        return self.wait("waiting for %r" % text, lambda s, d: text in s.text(), timeout_s)

    def wait_any(self, what, texts, timeout_s):
        """Waits for any of texts on the screen or in the raw bytes (several ways to know
        one screen, should the console have lost a byte of one); returns the one found."""
        raw = [t.encode("latin-1") for t in texts]

        def seen(s, d):
            shown = s.text()
            return next((t for t, r in zip(texts, raw) if t in shown or r in d), None)
        return self.wait(what, seen, timeout_s)

    def _redrawn(self, what, pred, timeout_s):
        """Waits for pred(screen), bounded by timeout_s; while it is not true for REDRAW_S at
        a time (a redraw damaged by lost bytes), presses space, which MokManager's menus
        ignore but answer by drawing their box again."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                return self.wait(what, lambda s, d: pred(s), max(0.1, min(REDRAW_S, left)))
            except UiTimeout:
                if left <= REDRAW_S or self.closed:
                    raise
                self.send(b" ")

    def choose(self, label, timeout_s, max_moves=20):
        """In the menu on screen, moves the highlight down to the line that is exactly
        `label` ("Continue" is not "Continue boot") and presses Enter. Every move waits for
        the highlight to have moved (console_select redraws its box on every key)."""
        cur = self._redrawn("waiting for a menu offering %r with a highlighted line" % label,
                            lambda s: label in s.text() and s.highlighted(), timeout_s)
        for _ in range(max_moves):
            if cur == label:
                self.send(ENTER)
                return
            before = cur
            self.send(DOWN)
            cur = self._redrawn("waiting for the highlight to leave %r (looking for %r)" % (
                before, label), lambda s: s.highlighted() not in (None, before) and
                s.highlighted(), timeout_s)
        raise UiTimeout("menu: %r not reached in %d moves" % (label, max_moves))

    def close(self):
        """Ends the reader before the socket is closed: a thread still blocked in recv on a
        closed descriptor could read from whatever socket reuses its number next."""
        if self.sock is None:
            return
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.reader.join(timeout=30)
        self.sock.close()
        self.sock = None
