"""``relavium-lsp demo``: a scripted editor session against a real server process.

``workspace`` builds the sample git repository and knows the demo's paths, ``client`` is the
small pygls-based editor, ``edits`` applies ``workspace/applyEdit`` like an editor,
``render`` and ``summary`` print it all for a person, and ``run`` is the script itself.
"""
