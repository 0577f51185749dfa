"""The mutation-testing driver (`bin/mutation`, tests/mutation.py): its units and equivalents files hold
together, and it tells mutants apart as written down."""

import pytest

from tests import mutation


def test_every_unit_names_modules_and_tests_that_exist():
    units = mutation.load_units()
    assert units and any(unit.ci for unit in units)
    for unit in units:
        assert unit.modules, unit.name
        for path in [*unit.modules, *unit.tests]:
            assert (mutation.ROOT / path).exists(), (unit.name, path)


def test_every_equivalent_belongs_to_a_unit_and_gives_its_reason():
    modules = {module for unit in mutation.load_units() for module in unit.modules}
    for entry in mutation.load_equivalents():
        assert entry.module in modules and entry.reason and (entry.removed or entry.added), entry


@pytest.mark.parametrize(("key", "function"), [
    ("judges.matching.x_match_steps__mutmut_1", "match_steps"),
    ("judges.matching.x__is_unit_number__mutmut_12", "_is_unit_number"),
    ("judges.matching.xǁScoreMatrixǁ__post_init____mutmut_6", "ScoreMatrix.__post_init__"),
])
def test_a_mutants_key_names_its_function(key, function):
    assert mutation.function_name(key) == function


def test_a_mutant_matches_an_equivalent_by_module_function_and_changed_lines():
    entry = mutation.Equivalent("a.py", "f", ["x = 1"], ["x = 2"], "why")
    mutant = mutation.Mutant("a.x_f__mutmut_3", "a.py", "f", 0, ["x = 1"], ["x = 2"])
    assert mutation.matches(entry, mutant)
    for other in (mutation.Mutant("a.x_g__mutmut_3", "a.py", "g", 0, ["x = 1"], ["x = 2"]),
                  mutation.Mutant("a.x_f__mutmut_4", "a.py", "f", 0, ["x = 1"], ["x = 3"]),
                  mutation.Mutant("b.x_f__mutmut_3", "b.py", "f", 0, ["x = 1"], ["x = 2"])):
        assert not mutation.matches(entry, other)


def test_the_diffs_changed_lines_are_read_without_its_header_and_context():
    diff = ("--- judges/matching.py\n+++ judges/matching.py\n@@ -1,2 +1,2 @@\n def f(a):\n"
            "-    return a <= 1\n+    return a < 1\n")
    assert mutation.diff_lines(diff) == (["return a <= 1"], ["return a < 1"])


def test_units_are_chosen_by_name_module_ci_flag_or_change():
    units = [mutation.Unit("pickle", ["t/safe_pickle.py"], ["tests/t/test_safe_pickle.py"], ci=True),
             mutation.Unit("quality", ["a/quality.py"], ["tests/a/test_quality.py"])]

    def names(patterns=(), ci=False, changed=None):
        return [unit.name for unit in mutation.select_units(units, list(patterns), ci, changed)]

    assert names() == ["pickle", "quality"]
    assert names(["quality"]) == names(["a/*"]) == ["quality"]
    assert names(ci=True) == ["pickle"]
    assert names(changed={"a/quality.py", "README.md"}) == ["quality"]
    assert names(changed={"tests/a/test_quality.py"}) == ["quality"]
    assert names(ci=True, changed={"tests/a/test_quality.py"}) == ["pickle", "quality"]
    assert names(changed=set()) == []

