"""What a workspace remembers: long-term workspace memory and introspection checkpoints."""
