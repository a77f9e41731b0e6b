"""Collectors of dbhost-exporter.

Every collector is a class with a ``name`` attribute and a ``collect()`` method
yielding prometheus_client metric families (custom-collector style, no global
registry state). The exporter runs each one per scrape, isolated from the others.
"""
