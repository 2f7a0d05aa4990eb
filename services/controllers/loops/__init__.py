"""One module per reconcile loop; each exposes a Controller built from a Context (services.controllers.context)."""
