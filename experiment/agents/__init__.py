"""The agents of the experiment: scripted baselines per interface, and a chat model."""
