"""tools/ticklablib/windows.py: the core clock and SMIs an experiment's windows ran on."""
from ticklablib import windows

PC = {"type": "core_clock", "aperf_mperf": True, "smi_count": True, "perf_ctl": True,
      "hwp": True, "turbo_known": True}
TCG = {"type": "core_clock", "aperf_mperf": False, "smi_count": False,
       "clock_reason": "CPUID.6:ECX[0] clear", "smi_reason": "not an Intel CPU"}


def win(hz, smi, **req):
    cc = {"effective_hz": hz, "c0_ppm": 500000}
    cc.update(req)
    return {"type": "window_events", "exp": "x", "core_clock": cc, "smi": smi}


def test_pc_windows_name_their_clock_request_and_smis():
    ws = [win(3_900_000_000, 0, hwp_min=8, hwp_max=39, hwp_desired=0, turbo=True),
          win(3_800_000_000, 2)]
    s = windows.summary(ws, PC)
    assert s == ("Core clock 3800 MHz..3900 MHz over 2 window(s) (HWP request min 8 max 39 "
                 "desired 0, turbo on); 2 SMI(s) in its windows.")


def test_emulator_says_why_not():
    s = windows.summary([], TCG)
    assert s == ("Core clock not known: CPUID.6:ECX[0] clear; SMIs not counted: not an "
                 "Intel CPU.")


def test_smis_counted_clock_not_known():
    cc = dict(TCG, smi_count=True)
    w = {"type": "window_events", "exp": "x", "core_clock": {"reason": "r"}, "smi": 0}
    assert windows.summary([w, w], cc).endswith("; 0 SMI(s) in its windows.")


def test_an_older_run_states_nothing():
    assert windows.summary([], None) is None
