"""Layer 1, input and output: readers, writers and the conversion of every input a user hands
over (paths, text, frames, dicts, other tools' objects) into the data model's frames.

Imports :mod:`retrieval_eval.model` and the base modules only.
"""
