"""The graph representation: reduce the FX graph that torch.compile captured, not the script's source.

A failing model often lives in a library that a source reducer cannot touch; the graph Dynamo hands the
compiler is always there. ``capture`` records it in the candidate's process, ``case`` holds one candidate,
``passes`` propose smaller ones, ``emit`` writes a standalone script, ``reduce`` drives the shared reducer.
"""
