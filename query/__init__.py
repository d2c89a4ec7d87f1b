"""toolsift."""
