from django.urls import path
from rest_framework.routers import SimpleRouter

from submissions.erasure_views import ErasureViewSet
from submissions.intake.views import SubmitView

router = SimpleRouter(trailing_slash=False)
router.register("erasures", ErasureViewSet, basename="erasure")

urlpatterns = [path("f/<str:slug>", SubmitView.as_view(), name="submit"), *router.urls]
