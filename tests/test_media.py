"""The content-addressed media store, media in recorded steps, and the slip log."""

from __future__ import annotations

import numpy as np
import polars as pl

from whowhen.media import load_rgb, media_path, media_root, put_png
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, run_episode

from .conftest import MAX_STEPS


def test_same_pixels_same_reference_and_file(media_dir) -> None:
    pixels = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    ref = put_png(pixels)
    assert media_root() == media_dir
    assert ref == put_png(pixels.copy()) and ref.endswith(".png")
    assert media_path(ref).parent.name == ref[:2]
    assert (load_rgb(ref) == pixels).all()
    other = pixels.copy()
    other[0, 0, 0] ^= 1
    assert put_png(other) != ref


class _ImageEnv:
    """An environment whose task and one tool show images."""

    benchmark, task_id, modality, category = "img", "t", "image", "test"

    def __init__(self) -> None:
        self.task_media = (put_png(np.zeros((2, 2, 3), np.uint8)),)
        self._done = False

    def reset(self) -> str:
        self._done = False
        return "look"

    def step(self, action):
        if action.tool == "final_answer":
            self._done = True
            return None
        return "zoom", "zoomed", (put_png(np.ones((2, 2, 3), np.uint8)),)

    @property
    def done(self) -> bool:
        return self._done

    def evaluate(self):
        from whowhen.runtime import Verdict

        return Verdict(True, 1.0, "x")


class _Looker:
    name, topology, policy, agents = "looker", "single", "scripted", ("assistant",)

    def next_action(self, history):
        if len(history) == 1:
            return Action("assistant", "zoom in", "zoom", {})
        return Action("assistant", "done", "final_answer", {"answer": "x"})


def test_episode_records_task_and_observation_media() -> None:
    env = _ImageEnv()
    episode = run_episode(env, _Looker(), 10)
    assert episode.history[0].media == env.task_media
    assert len(episode.history[2].media) == 1 and episode.history[1].media == ()


def test_slips_are_logged_out_of_band() -> None:
    runs, steps, slips = run_rollouts("arithmetic", "react", {"n_tasks": 12}, 3, 0.3, MAX_STEPS)
    assert slips.height > 0
    assert set(slips["run_id"]) <= set(runs["run_id"])
    # each logged step holds the slipped action, never a marker of the slip
    joined = slips.join(steps, on=["run_id", "step"])
    assert joined.height == slips.height
    for row in joined.iter_rows(named=True):
        assert Action.from_json(row["slipped_action"]).content == row["content"]
        assert (
            row["mode"]
            in {
                "reasoning.wrong_operand",
                "reasoning.wrong_operator",
                "action.wrong_tool_argument",
            }
            or row["mode"].count(".") == 1
        )
    assert not steps["content"].str.contains("(?i)slip").any()
    failed = set(runs.filter(~pl.col("success"))["run_id"])
    assert failed <= set(slips["run_id"])  # every natural failure comes from a slip
