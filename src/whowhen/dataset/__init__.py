"""The labelled dataset: built from the flipped continuations (`build`, `stage`), and
taken back out of the pipeline: Who&When-format and Hugging Face export (`export`),
human review sheets (`review`) and training data for attributors (`training`)."""
