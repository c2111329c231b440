"""consent package."""
