"""fp32 PyTorch reference models for the golden tests, one module per family.

Each model is written from its architecture's published definition. Module and parameter names
mirror the Hugging Face classes, so `state_dict()` keys are the checkpoint names Hugging Face
writes (before the per-case layout adds prefixes, extra heads or drops tied copies).
"""
