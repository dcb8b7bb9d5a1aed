"""The centre of the pipeline: the results model, threshold files, gate evaluation and its statistics."""
