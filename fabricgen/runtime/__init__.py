"""Runtime: how fabricgen uses processes and memory (fork pools, GC tuning); knows no fabric."""
