"""Where work runs: the one executor (threads here) and its Dask cluster backend. Imports engines,
config, games and the ground floor."""
