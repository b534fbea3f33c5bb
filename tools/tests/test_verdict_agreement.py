"""The boot tests' check that runs of one image do not contradict each other in their
decided verdicts (tests/qemu/exp_checks.py, verdict_contradiction): it must find each kind
of contradiction, and let "too close to call" stand against anything."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "qemu"))
import exp_checks  # noqa: E402


def v(topic, choice, decided=True, **kw):
    return dict(type="verdict", topic=topic, choice=choice, decided=decided,
                claim="%s %s" % (topic, choice), **kw)


def test_same_decided_verdicts_agree():
    a = [v("clockevent", "hpet"), v("hpet", "helps"), v("tick_rate", "2000", hz_safe=2000,
                                                         hz_over=2500)]
    assert exp_checks.verdict_contradiction(a, a) is None


def test_too_close_stands_against_anything():
    a = [v("clockevent", "hpet"), v("hpet", "helps")]
    b = [v("clockevent", "too_close", False), v("hpet", "too_close", False)]
    assert exp_checks.verdict_contradiction(a, b) is None


def test_different_fastest_devices_contradict():
    why = exp_checks.verdict_contradiction([v("clockevent", "hpet")], [v("clockevent", "pit")])
    assert why and why.startswith("clockevent")


def test_helps_against_no_contradicts():
    why = exp_checks.verdict_contradiction([v("hpet", "helps")], [v("hpet", "no")])
    assert why and why.startswith("hpet")
    assert exp_checks.verdict_contradiction([v("hpet", "helps")], [v("hpet", "only")]) is None


def test_tick_rates_contradict_only_when_the_bounds_cross():
    a = [v("tick_rate", "2000", hz_safe=2000, hz_over=2500)]
    ok = [v("tick_rate", "2400", hz_safe=2400, hz_over=3000)]
    crossed = [v("tick_rate", "2600", hz_safe=2600, hz_over=3000)]
    assert exp_checks.verdict_contradiction(a, ok) is None
    why = exp_checks.verdict_contradiction(a, crossed)
    assert why and why.startswith("tick_rate")
    assert exp_checks.verdict_contradiction(crossed, a).startswith("tick_rate")


def test_a_verdict_that_chose_must_say_on_what_not_measured_need_not():
    chose = dict(type="verdict", topic="tick_rate", choice="2000", claim="x", evidence=[])
    assert exp_checks.verdict_without_basis([chose]).startswith("comparative verdict")
    assert exp_checks.verdict_without_basis([v("tick_rate", "2000", method="m",
                                                intervals=[])]) is None
    # every tick-overhead row invalid (ticks lost on a loaded host): nothing chosen
    not_measured = dict(type="verdict", topic="tick_rate", choice=None, evidence=[],
                        claim="not measured: tick-overhead did not run, or none of its rows "
                              "was valid")
    assert exp_checks.verdict_without_basis([not_measured]) is None
