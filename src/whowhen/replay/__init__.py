"""Replay stage: counterfactual replay of natural failures (which step was decisive) and
the offline mode classifier (what kind of error it was)."""

from whowhen.replay.classify import classify, describe
from whowhen.replay.probe import Probe, Replay, replay_run
from whowhen.replay.stage import replay_failures, stage

__all__ = ["Probe", "Replay", "classify", "describe", "replay_failures", "replay_run", "stage"]
