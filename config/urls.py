from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config import public_pages
from submissions.views import thanks


def health(_request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


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
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("healthz", health, name="health"),
    path("thanks", thanks, name="thanks"),
]
