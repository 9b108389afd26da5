"""The fast lane: which tests are ``slow``, and the guard that keeps ``-m "not slow"`` fast.

``python -m pytest -m "not slow"`` runs every layer's unit tests; ``slow`` marks every test that
starts a process (a peer, a bot, tmux, ``ip`` or ``unshare`` for a network namespace, the
audit's forked workers) and every test that plays whole games in one process or runs for
seconds (over about 2 s on the shared 2-core machine, unless it is a core unit test of the
engine, the deck or the wire).

Where the marks live:

- a module whose tests are all slow says so itself: ``pytestmark = pytest.mark.slow``;
- tests marked ``netns`` are marked ``slow`` here;
- single slow tests in otherwise fast modules are named in :data:`SLOW_TESTS` (test function
  names; every parametrization of a named function is slow). ``tests/test_slow_marks.py``
  fails when a name there is no longer a test function of any module.

The guard: an audit hook (PEP 578) sees every process start (:data:`PROCESS_EVENTS`). A test
that starts one while it runs (its fixtures included) without the marker fails at teardown,
naming the first command, so the fast lane cannot silently grow a process game. It fails the
test rather than marking it: what a test starts is known only once it has run, after the
selection by ``-m``.

``tests/conftest.py`` imports the hooks below, which registers them.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

# Audit events that start a process (https://docs.python.org/3/library/audit_events.html).
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
                            "os.system", "os.exec", "pty.spawn"})

# Slow tests of otherwise fast modules, by test function name (a test keeps its mark when it
# moves to another module; every parametrization of a named function is slow).
SLOW_TESTS: frozenset[str] = frozenset({
    # test_audit_fork.py: the audit's forked workers (more than one file, or a whole game, audited on every core)
    "test_a_fork_across_two_files_is_named",
    "test_a_leavers_own_record_is_not_a_fork",
    "test_a_seat_cut_off_as_it_signed_is_not_a_fork",
    "test_a_whole_game_with_a_shorter_record_beside_it_is_complete",
    "test_an_evenings_games_audited_together_are_grouped_by_game",
    "test_seats_that_leave_one_after_another_are_not_a_fork",
    "test_two_seats_that_leave_at_once_beside_the_seats_that_remove_them",
    # test_bot_levels.py
    "test_bench_bots_json",
    # test_cheaters.py: whole in-process games with a cheating seat
    "test_badly_signed_frame_is_dropped_not_blamed",
    "test_cheater_is_caught_and_named",
    "test_no_share_leaves_before_every_shuffle_proof_passed",
    # test_code_attacks.py
    "test_a_relay_that_swallows_the_acceptors_wait_does_not_hold_it_forever",
    # test_comeback.py: peer processes killed and restarted, the full-screen command in tmux
    "test_host_killed_comes_back_by_the_same_host_command",
    "test_join_by_name_that_finds_nothing_says_so_after_the_full_screen",
    "test_joiner_killed_comes_back_by_the_same_join_connect",
    # test_conformance.py
    "test_independent_verifier_passes_the_vectors",
    # test_dead_hands.py
    "test_a_table_plays_a_dead_hand_to_its_score",
    # test_deck_group.py: a fresh interpreter loads (or refuses) the library copy
    "test_a_copy_that_is_not_private_or_not_a_library_is_not_loaded",
    "test_later_processes_load_the_copy_of_rbcls_library",
    "test_old_copies_of_other_installs_are_pruned",
    "test_the_library_rbcl_extracts_is_not_left_in_the_temporary_folder",
    # test_evidence.py
    "test_a_flooding_link_is_dropped_and_evidence_stays_small",
    # test_presence.py: whole in-process games through the node's clocks
    "test_a_decision_clock_starts_when_the_showdown_is_put_away",
    "test_a_seat_back_inside_rejoin_wait_gets_a_fresh_protocol_limit",
    "test_an_envelope_lost_on_one_link_reaches_the_seat_through_another",
    "test_an_internal_error_becomes_a_signed_leave",
    "test_proof_jobs_keep_their_decks_after_a_restock",
    "test_turn_clock_plays_the_bots_move_for_a_silent_person",
    # test_protocol_doc.py
    "test_three_seats_check_as_documented",
    # test_rematch.py
    "test_host_and_joiner_play_a_rematch_then_one_says_no",
    # test_removal_attacks.py: whole in-process games in which seats are removed
    "test_a_left_proof_must_be_the_seats_own_leave_of_this_game",
    "test_a_remove_racing_the_removed_seats_real_move_blames_nobody",
    "test_two_seats_gone_at_once_from_three_leave_the_last_waiting_blaming_nobody",
    "test_two_seats_gone_from_four_leave_two_that_cannot_remove_them",
    # test_removal_cheats.py
    "test_a_fault_quoting_a_leave_already_acted_on_does_not_stop_the_game_on_the_leaver",
    "test_a_fault_quoting_the_first_signers_vote_later_is_not_equivocation",
    "test_a_late_cosign_of_a_seat_removed_meanwhile_is_dropped_not_blamed",
    "test_a_leave_of_another_game_or_seat_does_not_remove_for_left",
    "test_a_minority_run_of_removes_does_not_tell_a_seat_it_was_removed",
    "test_a_remove_of_a_seat_that_does_not_exist_at_a_taken_place_blames_its_signer",
    "test_a_removed_seats_key_does_not_vote",
    "test_a_seat_gone_in_a_late_phase_is_removed_and_the_game_plays_on",
    "test_a_seat_that_signed_on_both_sides_of_a_cut_is_named_by_the_records",
    "test_an_eliminated_seat_gone_home_does_not_block_a_removal",
    "test_fuzzed_removes_and_votes_never_escape_nor_name_an_honest_seat",
    "test_nested_removal_completes_and_the_late_cosign_after_it_is_dropped",
    "test_one_cheater_on_both_sides_of_a_cut_does_not_let_both_sides_play_on",
    "test_one_cheaters_vote_flood_does_not_stop_a_majority_removal",
    "test_one_cheaters_vote_of_another_hand_does_not_poison_the_removal",
    "test_votes_of_another_game_position_or_hand_do_not_remove",
    # test_rendezvous.py
    "test_code_word_failures_are_one_line_and_a_clean_exit",
    # test_resilience.py: peer processes killed, stopped, cut off, or given a full disk
    "test_a_seat_cut_off_from_everyone_blames_nobody",
    "test_disk_full_mid_game_leaves_saying_why",
    "test_existing_transcript_of_another_game_is_refused",
    "test_joiner_gives_up_after_wait",
    "test_joiner_leaving_the_lobby_frees_its_seat",
    "test_joiner_started_before_the_host_keeps_looking",
    "test_killed_seat_restarts_with_the_same_command",
    "test_seat_asleep_mid_hand_wakes_and_the_game_finishes",
    "test_seat_asleep_past_rejoin_wait_wakes_listens_and_hears_it_was_removed",
    "test_seat_back_after_its_removal_is_told_and_the_others_finish",
    "test_seat_back_after_the_protocol_limit_but_inside_rejoin_wait_is_not_blamed",
    "test_seat_down_after_the_game_ended_comes_back_to_its_result",
    "test_seat_gone_for_good_is_removed_and_the_others_finish",
    "test_unwritable_folder_is_refused_before_sitting_down",
    # test_resync_attacks.py
    "test_repeated_sync_requests_cost_at_most_linear_data",
    # test_seeded.py: whole in-process games from the cache's copies and a cold run
    "test_copies_played_on_are_the_cold_game_whatever_the_order",
    # test_soak.py
    "test_bench_soak_one_faulted_game",
    # test_table_proof_system.py
    "test_a_cut_and_choose_table_plays_its_hands_with_cut_and_choose_proofs",
    # test_table_removal.py: whole in-process games in which seats are cut off, silent or removed
    "test_a_middle_seat_silent_at_the_game_end_is_waited_for",
    "test_a_remove_the_record_refutes_is_its_signers_violation_live_and_in_audit",
    "test_a_remove_without_a_majority_is_its_signers_violation",
    "test_a_seat_cut_off_as_it_signs_any_step_never_ends_a_second_game",
    "test_a_seat_that_leaves_mid_game_is_removed_as_left",
    "test_forged_and_early_removals_are_violations",
    "test_silent_seat_is_removed_by_the_others_who_play_on",
    "test_the_first_seat_silent_at_the_game_end_is_removed",
    "test_the_game_end_signed_by_a_majority_ends_without_the_last_seat",
    "test_under_any_cut_at_most_one_side_removes_anyone",
    # test_table_view.py
    "test_remembered_close_options_equal_fresh_ones",
    # test_tally.py
    "test_two_play_games_in_an_evening_add_up",
    # test_ui_cli.py: the command as a process
    "test_bad_connect_address_is_one_line",
    "test_ctrl_c_in_line_mode_leaves_the_table",
    "test_ctrl_c_without_ui_is_one_line",
    "test_join_list_json_and_join_without_a_terminal",
    "test_name_is_the_players_name_in_every_command",
    "test_piped_audit_prints_no_progress",
    "test_port_in_use_is_named",
    "test_unknown_host_is_one_line",
    # test_vector_drift.py
    "test_every_vector_file_is_what_the_code_generates",
})

# Standard-library modules that run a short helper to probe the system, once per process
# (ctypes.util.find_library runs ldconfig, which loading libsodium does): not a test's process.
PROBES = frozenset({os.path.join(sysconfig.get_paths()["stdlib"], name) for name in ("ctypes/util.py", "platform.py")})

# Process starts seen while the current test runs (setup, call and teardown); None between tests.
_starts: list[str] | None = None


def _probing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename in PROBES:
            return True
        frame = frame.f_back
    return False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _starts is not None and event in PROCESS_EVENTS and not _probing(sys._getframe(1)):
        # subprocess.Popen, os.posix_spawn, os.spawn and os.exec carry the path and the argv,
        # os.system the command line, os.fork and os.forkpty nothing
        argv = args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else args[:1]
        _starts.append(f"{event}: {' '.join(map(str, argv)) if argv else '(fork)'}")


sys.addaudithook(_audit)


def is_listed_slow(item: pytest.Item) -> bool:
    """Whether :data:`SLOW_TESTS` names ``item``'s test function."""
    return getattr(item, "originalname", item.name) in SLOW_TESTS


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` the tests of :data:`SLOW_TESTS` and those marked ``netns`` (before ``-m``
    selects)."""
    for item in items:
        if not item.get_closest_marker("slow") and (item.get_closest_marker("netns") or is_listed_slow(item)):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    global _starts
    _starts = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """At teardown, fail a passing test without the ``slow`` marker that started a process."""
    global _starts
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if call.when == "teardown":
        starts, _starts = _starts, None
        if starts and report.passed and not item.get_closest_marker("slow"):
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid} started {len(starts)} process(es) without the slow marker "
                               f"(first: {starts[0]}): mark it slow (its module's pytestmark, or "
                               f"SLOW_TESTS in tests/slow_marks.py) so that -m 'not slow' stays the fast lane")
