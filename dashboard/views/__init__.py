"""The dashboard's pages, one module per area; dashboard/urls.py names each page."""
