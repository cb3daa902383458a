from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts import public_pages
from operations import views as operations
from submissions.intake.views import ShortSubmitView, thanks

urlpatterns = [
    path("admin/login/", public_pages.admin_login),  # before the admin's own, which it guards
    path("admin/", admin.site.urls),
    path("dashboard/", include("dashboard.urls")),
    path("", RedirectView.as_view(pattern_name="dashboard:home", permanent=False)),
    path("api/auth/google/", include("integrations.google_urls")),
    path("api/auth/", include("accounts.urls")),
    path("api/v1/", include("forms_app.urls")),
    path("api/v1/", include("submissions.urls")),
    path("api/v1/", include("pullapi.urls")),
    path("api/v1/", include("integrations.urls")),
    path("api/v1/", include("files.urls")),
    path("api/v1/", include("teams.urls")),
    path("api/v1/", include("integrations.hooks.urls")),
    path("api/v1/", include("audit.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("healthz", operations.healthz, name="health"),
    path("readyz", operations.readyz, name="ready"),
    path("status", operations.installation_status, name="status"),
    path("metrics", operations.metrics, name="metrics"),
    path("thanks", thanks, name="thanks"),
    # The public endpoint at a hosted form service's path (core/endpoints.py); served, like
    # /api/v1/f/{slug}, by its one door (submissions/intake/middleware.py).
    path("f/<str:slug>", ShortSubmitView.as_view(), name="submit-short"),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's among them).
    path("favicon.ico", RedirectView.as_view(url=static("dashboard/favicon.svg"), permanent=True)),
]
