"""One module per reconcile loop; each exposes a Controller class built from a manager Context."""
