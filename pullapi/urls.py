from django.urls import path
from rest_framework.routers import SimpleRouter

from pullapi.management_views import ApiKeyViewSet
from pullapi.views import SubmissionDetailView, SubmissionListView, SubmissionStreamView

router = SimpleRouter(trailing_slash=False)
router.register("api-keys", ApiKeyViewSet, basename="api-key")

urlpatterns = [
    path("submissions", SubmissionListView.as_view(), name="pull-submissions"),
    path("submissions/stream", SubmissionStreamView.as_view(), name="pull-stream"),
    path("submissions/<str:submission_id>", SubmissionDetailView.as_view(), name="pull-submission"),
    *router.urls,
]
