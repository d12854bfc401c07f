"""retrieval_eval: measure retrieval, keep labels true, measure OOD robustness."""
